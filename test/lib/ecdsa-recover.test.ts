// lib/ecdsa-recover.ts: the signer libsecp256k1 recovers, native and in WebAssembly, is viem's; anything that is not strict ECDSA
// (v other than 27/28, a high s, another length) is undefined, never an error.
import { keccak256, recoverAddress, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { recoverBuild, recoverSigner as recover, type RecoverBuild } from '../../src/lib/ecdsa-recover.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

it('recovers with the native build on Linux x64 (the platform CI and the benchmarks run on)', async () => {
  if (process.platform === 'linux' && process.arch === 'x64') expect(await recoverBuild()).toBe('native');
  else expect(['native', 'wasm']).toContain(await recoverBuild());
});

describe.each(['native', 'wasm'] as RecoverBuild[])('recovering a signer with libsecp256k1 (%s)', (build) => {
  const recoverSigner = (digest: Hex | Uint8Array, signature: string) => recover(digest, signature, build);
  it('gives the address viem recovers, for many digests', async () => {
    for (let i = 0; i < 20; i++) {
      const digest = keccak256(toHex(`digest ${i}`));
      const signature = await account.sign({ hash: digest });
      expect(await recoverSigner(digest, signature)).toBe((await recoverAddress({ hash: digest, signature })).toLowerCase());
      expect(await recoverSigner(digest, signature)).toBe(account.address.toLowerCase());
      expect(await recoverSigner(Buffer.from(digest.slice(2), 'hex'), signature)).toBe(account.address.toLowerCase()); // the digest's bytes
    }
  });

  it('gives each signer its own address, signers interleaved (the address kept per public key)', async () => {
    const signers = Array.from({ length: 12 }, (_, i) => privateKeyToAccount(keccak256(toHex(`signer ${i}`))));
    for (let round = 0; round < 3; round++) {
      for (const [i, signer] of signers.entries()) {
        const digest = keccak256(toHex(`round ${round} call ${i}`));
        expect(await recoverSigner(digest, await signer.sign({ hash: digest }))).toBe(signer.address.toLowerCase());
      }
    }
  });

  it('is undefined for what is not strict ECDSA, or for another digest', async () => {
    const digest = keccak256(toHex('x'));
    const signature = await account.sign({ hash: digest });
    const s = BigInt(`0x${signature.slice(66, 130)}`);
    const flipped = parseInt(signature.slice(130), 16) === 27 ? '1c' : '1b';
    const highS = `${signature.slice(0, 66)}${(N - s).toString(16).padStart(64, '0')}${flipped}` as Hex;
    expect((await recoverAddress({ hash: digest, signature: highS })).toLowerCase()).toBe(account.address.toLowerCase()); // viem accepts it
    expect(await recoverSigner(digest, highS)).toBeUndefined();
    expect(await recoverSigner(digest, `${signature.slice(0, 130)}00`)).toBeUndefined(); // v 0
    expect(await recoverSigner(digest, signature.slice(0, 130))).toBeUndefined(); // 64 bytes
    expect(await recoverSigner('0x1234', signature)).toBeUndefined();
    expect(await recoverSigner(Buffer.from(digest.slice(2, 62), 'hex'), signature)).toBeUndefined(); // 30 bytes
    expect(await recoverSigner(keccak256(toHex('y')), signature)).not.toBe(account.address.toLowerCase());
  });
});
