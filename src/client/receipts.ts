// What a paid answer proves: its Content-Digest (RFC 9530, sha-256 of the body's exact bytes), checked against the
// bytes received whenever the answer carries one, and its signed receipt (the x402 offer-receipt extension, in
// PAYMENT-RESPONSE), read on every paid answer and verified when the client is asked to (`verifyReceipts`): its
// signature with the package's own verify functions against the server's published key, and what it says (the
// payer, the network, the route, the transaction, and the digest its JWS header binds) against this very call.
// The extension package (jose and noble with it) is loaded only once an answer carries a receipt.
import type { SettleResponse } from '@x402/core/types';
import type { ReceiptPayload, SignedReceipt } from '@x402/extensions/offer-receipt';
import { MarketgateError, type SentPayment } from './errors.ts';

/** The key receipts are checked against: the server's published `x402.receipts` (agent card, /openapi.json), or its JWK alone. */
export interface ReceiptKey {
  /** The public key (JWS receipts), as the agent card's `securitySchemes.x402.receipts.jwk` gives it. */
  jwk?: { kty: string; crv: string; x: string; y: string };
  /** The signer's EVM address (EIP-712 receipts). */
  address?: string;
}

/** A paid answer's signed receipt. */
export interface Receipt {
  /** As the server sent it (`extensions["offer-receipt"].info.receipt`): keep it, with `body`, to prove what was paid for. */
  signed: SignedReceipt;
  /** What it says: version, network, resourceUrl, payer, issuedAt, and the transaction when the server names it. */
  payload: ReceiptPayload;
  /** The Content-Digest its JWS protected header binds (marketgate's `content-digest` parameter), when there is one. */
  contentDigest: string | undefined;
  /** Checked against the server's key and this call (`verifyReceipts`); false: read, not checked. */
  verified: boolean;
}

const OFFER_RECEIPT = 'offer-receipt';
const CONTENT_DIGEST = 'content-digest';

/** `sha-256=:<base64>:` of `bytes`, as RFC 9530 writes it (WebCrypto: Node and browsers alike). */
export async function sha256Digest(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  let binary = '';
  for (const b of hash) binary += String.fromCharCode(b);
  return `sha-256=:${btoa(binary)}:`;
}

/** The sha-256 member of a Content-Digest field (`sha-256=:…:`, among others); undefined when it has none. */
function sha256Member(field: string): string | undefined {
  const member = field.split(',').map((m) => m.trim()).find((m) => /^sha-256=:[A-Za-z0-9+/]+=*:$/.test(m));
  return member;
}

export interface DigestCheck {
  /** The Content-Digest received (its sha-256 member), when the answer carried one. */
  contentDigest: string | undefined;
  /** sha-256 of the bytes received, when it was computed (a Content-Digest or a receipt asked for it). */
  received: string | undefined;
}

/**
 * Checks an answer's Content-Digest against the bytes received. A content-encoded answer is not checked: its digest
 * is of the encoded bytes, and fetch hands over decoded ones (marketgate never encodes a paid answer).
 */
export async function checkContentDigest(headers: Headers, bytes: Uint8Array, fail: (error: string) => MarketgateError): Promise<DigestCheck> {
  const field = headers.get('content-digest');
  const given = field === null ? undefined : sha256Member(field);
  if (given === undefined || headers.get('content-encoding')) return { contentDigest: given, received: undefined };
  const received = await sha256Digest(bytes);
  if (received !== given) throw fail(`the body received does not match its Content-Digest (${given}; the bytes received hash to ${received})`);
  return { contentDigest: given, received };
}

/** The signed receipt in a decoded PAYMENT-RESPONSE, read (not verified); undefined when there is none. */
export async function readReceipt(settle: SettleResponse): Promise<Receipt | undefined> {
  const signed = (settle.extensions?.[OFFER_RECEIPT] as { info?: { receipt?: SignedReceipt } } | undefined)?.info?.receipt;
  if (!signed || (signed.format !== 'jws' && signed.format !== 'eip712') || typeof signed.signature !== 'string') return undefined;
  const { extractJWSHeader, extractReceiptPayload } = await import('@x402/extensions/offer-receipt');
  try {
    const payload = extractReceiptPayload(signed);
    const digest = signed.format === 'jws' ? (extractJWSHeader(signed.signature) as Record<string, unknown>)[CONTENT_DIGEST] : undefined;
    return { signed, payload, contentDigest: typeof digest === 'string' ? digest : undefined, verified: false };
  } catch {
    // Unreadable: as good as none; a client verifying receipts refuses the answer for it.
    return undefined;
  }
}

/** What a receipt must say of this call. */
export interface ReceiptExpectation {
  /** The route's path, e.g. `/v1/price`. */
  path: string;
  payer: string;
  payment: SentPayment;
  settle: SettleResponse;
  /** sha-256 of the bytes received. */
  bodyDigest: string;
}

/** Verifies `receipt` against `key` and this call; throws what does not hold, as `fail` makes it. */
export async function verifyReceipt(receipt: Receipt | undefined, key: ReceiptKey, call: ReceiptExpectation, fail: (error: string) => MarketgateError): Promise<Receipt> {
  if (!receipt) throw fail('the paid answer carries no readable signed receipt (PAYMENT-RESPONSE extensions["offer-receipt"])');
  const { verifyReceiptSignatureEIP712, verifyReceiptSignatureJWS } = await import('@x402/extensions/offer-receipt');
  let payload: ReceiptPayload;
  try {
    if (receipt.signed.format === 'jws') {
      if (!key.jwk) throw new Error('no JWK to check a JWS receipt with');
      payload = await verifyReceiptSignatureJWS(receipt.signed, key.jwk);
    } else {
      const verified = await verifyReceiptSignatureEIP712(receipt.signed);
      if (!key.address || verified.signer.toLowerCase() !== key.address.toLowerCase()) throw new Error(`signed by ${verified.signer}, not ${key.address ?? 'a known address'}`);
      payload = verified.payload;
    }
  } catch (err) {
    throw fail(`the receipt's signature does not verify against the server's key (${(err as Error)?.message ?? String(err)})`);
  }
  const wrong: string[] = [];
  if (payload.payer?.toLowerCase() !== call.payer.toLowerCase()) wrong.push(`payer ${payload.payer}, not ${call.payer}`);
  if (payload.network !== call.payment.network) wrong.push(`network ${payload.network}, not ${call.payment.network}`);
  if (!pathOf(payload.resourceUrl)?.endsWith(call.path)) wrong.push(`resource ${payload.resourceUrl}, not ${call.path}`);
  if (payload.transaction && call.settle.transaction && payload.transaction.toLowerCase() !== call.settle.transaction.toLowerCase()) {
    wrong.push(`transaction ${payload.transaction}, not ${call.settle.transaction}`);
  }
  // A JWS receipt binds the answer's bytes in its protected header (an EIP-712 receipt has no room for them).
  if (receipt.signed.format === 'jws' && receipt.contentDigest !== call.bodyDigest) {
    wrong.push(receipt.contentDigest ? `it binds ${receipt.contentDigest}, and the body received hashes to ${call.bodyDigest}` : 'it binds no content-digest');
  }
  if (wrong.length) throw fail(`the receipt does not match this call: ${wrong.join('; ')}`);
  return { ...receipt, payload, verified: true };
}

function pathOf(url: unknown): string | undefined {
  try {
    return new URL(String(url)).pathname;
  } catch {
    return undefined;
  }
}

/** The key the server publishes (its agent card's `securitySchemes.x402.receipts`); throws when it publishes none. */
export async function publishedReceiptKey(baseUrl: string, fetcher: typeof fetch, timeoutMs: number): Promise<ReceiptKey> {
  const url = `${baseUrl}/.well-known/agent.json`;
  let card: unknown;
  try {
    const res = await fetcher(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    card = await res.json();
  } catch (err) {
    throw new MarketgateError({ kind: 'receipt', path: '/.well-known/agent.json', error: `the server's receipt key could not be read from its agent card: ${(err as Error)?.message ?? String(err)}` });
  }
  const key = (card as { securitySchemes?: { x402?: { receipts?: ReceiptKey | null } } } | null)?.securitySchemes?.x402?.receipts;
  if (!key || (!key.jwk && !key.address)) {
    throw new MarketgateError({ kind: 'receipt', path: '/.well-known/agent.json', error: 'the server publishes no receipt key (it signs no receipts: X402_SIGNING_KEY unset); give verifyReceipts the key to expect, or leave it off' });
  }
  return key;
}
