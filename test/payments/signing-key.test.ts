// The signing key of offers and receipts (X402_SIGNING_KEY): checked once, with the variable named; its published
// part is the JWK and EVM address of that very key; Content-Digest is RFC 9530's form of SHA-256.
import { createHash } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { extractPublicKeyFromKid, verifyReceiptSignatureJWS } from '@x402/extensions/offer-receipt';
import { privateKeyToAddress } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { contentDigest, publishedSigningKey, signingKey } from '../../src/payments/core/signing-key.ts';

describe('X402_SIGNING_KEY', () => {
  it.each([
    ['0x1234', 'a secp256k1 private key, 0x + 64 hex digits'],
    [`${'ab'.repeat(32)}`, 'a secp256k1 private key, 0x + 64 hex digits'],
    [`0x${'0'.repeat(64)}`, 'a secp256k1 private key, 0x + 64 hex digits, not zero and below the curve order'],
    ['0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'a secp256k1 private key, 0x + 64 hex digits, not zero and below the curve order'],
  ])('%s is refused naming the variable, never showing the value', (value, expected) => {
    expect(() => loadConfig({ X402_SIGNING_KEY: value })).toThrow(ConfigError);
    expect(() => loadConfig({ X402_SIGNING_KEY: value })).toThrow(`X402_SIGNING_KEY="[secret]" is invalid: expected ${expected}`);
  });

  it('unset: nothing is signed; set: the key is kept', () => {
    expect(loadConfig({}).x402.signingKey).toBeUndefined();
    const key = '0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364140'; // the largest key there is
    expect(loadConfig({ X402_SIGNING_KEY: key }).x402.signingKey).toBe(key);
  });

  it("publishes the key's JWK, its did:jwk kid and its EVM address; a signature made with it verifies against that JWK", async () => {
    const key = `0x${'3c'.repeat(32)}` as const;
    const published = publishedSigningKey(key);
    expect(published.address).toBe(privateKeyToAddress(key));
    expect(published.kid).toBe(`did:jwk:${Buffer.from(JSON.stringify(published.jwk)).toString('base64url')}`);
    expect(((await extractPublicKeyFromKid(published.kid)) as KeyObject).export({ format: 'jwk' })).toEqual(published.jwk);
    const signer = signingKey(key);
    expect(signer.published).toEqual(published);
    const header = Buffer.from(JSON.stringify({ alg: 'ES256K', kid: published.kid })).toString('base64url');
    const payload = Buffer.from('{"version":1}').toString('base64url');
    const signature = `${header}.${payload}.${signer.sign(`${header}.${payload}`)}`;
    expect(await verifyReceiptSignatureJWS({ format: 'jws', signature }, published.jwk)).toEqual({ version: 1 });
    // The kid alone names the same key (did:jwk): the package resolves it without a network call.
    expect(await verifyReceiptSignatureJWS({ format: 'jws', signature })).toEqual({ version: 1 });
  });

  it('Content-Digest is sha-256 of the bytes, base64 between colons (RFC 9530)', () => {
    const bytes = Buffer.from('{"data":{"price":1.5},"meta":{}}');
    expect(contentDigest(bytes)).toBe(`sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`);
    expect(contentDigest(Buffer.from(''))).toBe('sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:');
  });
});
