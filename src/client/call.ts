// One call to a marketgate route: GET, retried as retry.ts allows; on a 402 with a wallet, one payment is
// signed and sent — and resent unchanged on every retry, so the server's payment identifier answers it once.
// The 402's terms are kept (terms.ts): the next call to the route signs its payment at once and sends it with its
// first request, one HTTP exchange instead of two; a 402 in answer with other terms (they changed) is paid once
// more with the new ones, as a first 402 is.
// A second payment is signed only when the server said the first was refused (the batch-settlement scheme's
// corrective 402); never while the first one's outcome is unknown. A success's Content-Digest is checked against
// the bytes received, and a paid answer's signed receipt read, and verified when asked (receipts.ts). What the
// server says of a payment never lowers what it counts against maxSpendUsd (spend.ts); a redirect to another
// origin is not followed (redirects.ts).
import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import { errorBody, paymentRequired, paymentResponse, retryAfterSeconds } from './answer.ts';
import { MarketgateError, type SentPayment } from './errors.ts';
import type { Payer, SignedPayment } from './payer.ts';
import { isRedirect, MAX_REDIRECTS, redirectTarget } from './redirects.ts';
import { checkContentDigest, readReceipt, sha256Digest, verifyReceipt, type Receipt, type ReceiptKey } from './receipts.ts';
import { exchange, type Outcome, type RetryPolicy } from './retry.ts';
import { attoUsd, usd, type Hold, type SpendLimit } from './spend.ts';
import type { RouteTerms } from './terms.ts';

/** Query parameters as a route takes them; undefined and null ones are left out. */
export type QueryInput = Record<string, string | number | boolean | null | undefined>;

/** A success: the envelope as served, and what a caller may want to know about how it came. */
export interface CallResult<E = unknown> {
  /** `{ data, meta }`, as the server sent it. */
  envelope: E;
  status: number;
  requestId: string | undefined;
  /** Requests sent for this call: the unpaid one (none when the route's terms were kept) and the paid one(s), retries included. */
  attempts: number;
  /** The x402 payment, when this call was paid with the wallet. */
  payment: Payment | undefined;
  /** The answer's headers as received (PAYMENT-RESPONSE, Content-Digest). */
  headers: Headers;
  /** The body as received, as text: with `receipt`, what proves what was paid for (its bytes hash to `contentDigest`). */
  body: string;
  /** The answer's Content-Digest (its `sha-256=:…:`), checked against the bytes received; undefined when it has none. */
  contentDigest: string | undefined;
  /** The signed receipt of a call paid with x402, when the server sends one; `verified` with `verifyReceipts`. */
  receipt: Receipt | undefined;
}

/** A call paid with x402: what was signed, and what the server's PAYMENT-RESPONSE said. */
export interface Payment extends SentPayment {
  /**
   * What the server says the call was charged, in US dollars (a batch-settlement voucher's `chargedAmount`, at most
   * the price; an `exact` payment's amount). Only reported: maxSpendUsd counts the amount signed.
   */
  chargedUsd: string;
  /** The decoded PAYMENT-RESPONSE. */
  settle: SettleResponse;
}

export interface Caller {
  baseUrl: string;
  headers: Record<string, string>;
  hasKey: boolean;
  fetch: typeof fetch;
  retry: Omit<RetryPolicy, 'deadline'>;
  deadlineMs: number;
  payer: Payer | undefined;
  spend: SpendLimit;
  /** The terms of each route's last 402, paid at once on the next call. */
  terms: RouteTerms;
  /** verifyReceipts: the key receipts are checked against (read once); undefined: receipts are read, not verified. */
  receiptKey: (() => Promise<ReceiptKey>) | undefined;
}

export function routeUrl(baseUrl: string, path: string, query: QueryInput | undefined): string {
  if (!path.startsWith('/')) throw new MarketgateError({ kind: 'config', path, error: 'a route path starts with /' });
  let search = '';
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) params.append(k, String(v));
    search = params.size ? `${path.includes('?') ? '&' : '?'}${params}` : '';
  }
  return `${baseUrl}${path}${search}`;
}

export async function callRoute(c: Caller, path: string, query: QueryInput | undefined): Promise<CallResult> {
  const url = routeUrl(c.baseUrl, path, query);
  const policy: RetryPolicy = { ...c.retry, deadline: performance.now() + c.deadlineMs };
  const kept = c.payer && !c.hasKey ? c.terms.get(path) : undefined;
  if (kept) return pay(c, url, path, kept, policy, 0, true);
  const first = await exchange((signal) => c.fetch(url, { headers: c.headers, signal }), policy);
  const answer = first.final;
  const attempts = first.attempts.length;
  if (answer.kind !== 'answer') throw noAnswer(path, answer, attempts, undefined);
  if (isRedirect(answer.status)) throw redirected(path, url, answer, attempts, undefined);
  if (answer.status !== 402 || c.hasKey) return (await finish(path, answer, attempts, undefined)).result;
  const required = paymentRequired(answer.headers);
  if (!c.payer || !required) {
    const price = (parseJson(answer.body) as { price?: unknown } | undefined)?.price;
    const priced = typeof price === 'string' ? ` (${price} a call)` : '';
    throw new MarketgateError({
      kind: c.payer ? 'http' : 'payment-required',
      path,
      status: 402,
      error: c.payer ? 'the 402 carries no readable PAYMENT-REQUIRED header' : `this route is paid${priced}: give the client an apiKey, or a wallet to pay with x402`,
      requestId: answer.headers.get('x-request-id') ?? undefined,
      attempts,
    });
  }
  c.terms.keep(path, required);
  return pay(c, url, path, required, policy, attempts, false);
}

/** `kept`: the offer is the route's kept terms, sent without asking first (a 402 with other terms is paid once more). */
async function pay(c: Caller, url: string, path: string, offer: NonNullable<ReturnType<typeof paymentRequired>>, policy: RetryPolicy, attempts: number, kept: boolean): Promise<CallResult> {
  const payer = c.payer!;
  let carry: Hold | undefined;
  for (let signing = 1; ; signing++) {
    const requirements = payer.choose(offer, path);
    const { signed, sent, read } = await payer.serialize(requirements, async () => {
      const signed = await payer.sign(offer, requirements, path, carry);
      const headers = { ...c.headers, 'PAYMENT-SIGNATURE': signed.signature };
      const sent = await exchange((signal) => c.fetch(url, { headers, signal }), policy);
      const final = sent.final;
      const read = final.kind === 'answer' ? await payer.read(signed, final.status, final.headers) : undefined;
      return { signed, sent, read };
    });
    attempts += sent.attempts.length;
    const final = sent.final;
    // From here on the payment is signed: it counts as spent at the amount signed whatever the answer says, and
    // only the chain releases it (an authorization shown unused after it expired: spend.ts, chain.ts).
    if (final.kind !== 'answer') throw noAnswer(path, final, attempts, signed);
    if (isRedirect(final.status)) throw redirected(path, url, final, attempts, signed);
    const settle = read?.settle ?? paymentResponse(final.headers);
    if (settle?.success) {
      c.spend.spend(signed.hold);
      payer.paidAt(signed, url);
      const payment = { ...sentPayment(signed), chargedUsd: usd(chargedAtto(signed, settle)), settle };
      if (final.status < 400) return withReceipt(c, path, final, attempts, payment, payer.addressFor(signed.network));
      throw httpError(path, final, attempts, true, signed);
    }
    const charged = chargedWithout(signed, sent.attempts);
    if (charged === true) c.spend.spend(signed.hold);
    if (final.status < 400) return (await finish(path, final, attempts, undefined)).result; // served, and the server says nothing was settled
    // A refusal the scheme recovered from (its channel state resynchronised, checked against a voucher this wallet
    // signed or the chain): sign anew once. The new voucher takes over this one's hold: the two together raise
    // what the channel's receiver can claim by one price at most.
    if (final.status === 402 && read?.recovered && charged === false && signing === 1) {
      offer = paymentRequired(final.headers) ?? offer;
      c.terms.keep(path, offer);
      carry = signed.hold;
      continue;
    }
    // A batch-settlement payment refused for a channel state the scheme could not resynchronise (no RPC to read the
    // channel on chain): paid once more with `exact`, as are the next calls to this payee.
    if (final.status === 402 && charged === false && signing <= 2 && payer.unrecoverableBatch(signed, paymentRequired(final.headers)?.error)) {
      offer = paymentRequired(final.headers) ?? offer;
      continue;
    }
    // Kept terms that no longer hold (the server's changed): its 402 says so, with the new ones, and nothing was
    // taken. Paid once with the new terms, as a first 402 is; the refused payment stays counted as signed
    // (an `exact` authorization until the chain shows it expired unused).
    const renewed = final.status === 402 && kept && charged === false && signing === 1 ? changedTerms(payer, offer, paymentRequired(final.headers), path) : undefined;
    if (renewed) {
      offer = renewed;
      c.terms.keep(path, offer);
      continue;
    }
    if (final.status === 402) c.terms.forget(path);
    throw httpError(path, final, attempts, charged, signed);
  }
}

/** The 402's terms when this payer would pay them otherwise than `before`; undefined when they are the same (a refusal). */
function changedTerms(payer: Payer, before: NonNullable<ReturnType<typeof paymentRequired>>, after: ReturnType<typeof paymentRequired>, path: string): typeof after {
  if (!after) return undefined;
  const key = (r: PaymentRequirements) => JSON.stringify([r.scheme, r.network, r.asset, r.amount, r.payTo, r.maxTimeoutSeconds, r.extra ?? null]);
  let was: string, now: string;
  try {
    was = key(payer.choose(before, path));
    now = key(payer.choose(after, path));
  } catch {
    return undefined;
  }
  return was === now ? undefined : after;
}

/** What the server says it charged: an `exact` payment moves its whole amount; a voucher's `chargedAmount` is at most its price. */
function chargedAtto(signed: SignedPayment, settle: SettleResponse): bigint {
  const amount = signed.scheme === 'exact' ? undefined : chargedAmount(settle);
  const price = attoUsd(BigInt(signed.amount), signed.decimals);
  const atto = amount === undefined ? price : attoUsd(BigInt(amount), signed.decimals);
  return atto < price ? atto : price;
}

/**
 * Whether a paid call that ended without a successful PAYMENT-RESPONSE was charged. An attempt with no answer,
 * or a 5xx that does not say a route's own provider failed (a facilitator's, a proxy's), may have been settled.
 * Once such an attempt happened, a later definite answer about the same payment settles the question only when
 * the payment carried an identifier (the server answers the same payment once) and the answer is not a 402
 * (a settled payment whose identifier was released is refused as used: then its nonce says it was taken).
 */
function chargedWithout(signed: SignedPayment, attempts: Outcome[]): boolean | 'unknown' {
  const final = attempts.at(-1)!;
  if (uncertain(final)) return 'unknown';
  // An `exact` authorization's nonce is this payment's own: "already used" means its transfer happened.
  if (signed.scheme === 'exact' && final.kind === 'answer' && final.status === 402 && /nonce_already_used/.test(paymentRequired(final.headers)?.error ?? '')) return true;
  const earlier = attempts.slice(0, -1).some(uncertain);
  if (!earlier) return false;
  return signed.identifier && final.kind === 'answer' && final.status !== 402 ? false : 'unknown';
}

function uncertain(o: Outcome): boolean {
  if (o.kind !== 'answer') return true;
  if (o.status < 500) return false;
  const source = errorBody(o.body)?.source;
  return source === undefined || source === 'facilitator';
}

function chargedAmount(settle: SettleResponse): string | undefined {
  const amount = (settle.extra as { chargedAmount?: unknown } | undefined)?.chargedAmount;
  return typeof amount === 'string' && /^\d+$/.test(amount) ? amount : undefined;
}

const sentPayment = (s: SignedPayment): SentPayment => ({
  scheme: s.scheme,
  network: s.network,
  amount: s.amount,
  asset: s.asset,
  usd: s.usd,
  identifier: s.identifier,
  signature: s.signature,
});

type Answer = Extract<Outcome, { kind: 'answer' }>;

/** A success as the caller gets it, its Content-Digest checked; `bodyDigest`: sha-256 of the bytes, when computed. */
async function finish(path: string, answer: Answer, attempts: number, payment: Payment | undefined): Promise<{ result: CallResult; bodyDigest: string | undefined }> {
  const requestId = answer.headers.get('x-request-id') ?? undefined;
  if (answer.status >= 400) throw httpError(path, answer, attempts, false, undefined);
  const digest = await checkContentDigest(answer.headers, answer.bytes, receiptError(path, answer, attempts, payment));
  const envelope = parseJson(answer.body);
  if (envelope === undefined) {
    throw new MarketgateError({ kind: 'http', path, status: answer.status, error: 'the answer is not JSON', requestId, attempts, charged: payment ? true : false, payment });
  }
  const result = { envelope, status: answer.status, requestId, attempts, payment, headers: answer.headers, body: answer.body, contentDigest: digest.contentDigest, receipt: undefined };
  return { result, bodyDigest: digest.received };
}

/** A paid success with its receipt: read, and verified against the server's key and this call when asked. */
async function withReceipt(c: Caller, path: string, answer: Answer, attempts: number, payment: Payment, payer: string): Promise<CallResult> {
  const { result, bodyDigest } = await finish(path, answer, attempts, payment);
  const receipt = await readReceipt(payment.settle);
  if (!c.receiptKey) return { ...result, receipt };
  const fail = receiptError(path, answer, attempts, payment);
  let key: ReceiptKey;
  try {
    key = await c.receiptKey();
  } catch (err) {
    throw fail(err instanceof MarketgateError ? err.error : String(err));
  }
  const expected = { path, payer, payment, settle: payment.settle, bodyDigest: bodyDigest ?? (await sha256Digest(answer.bytes)) };
  return { ...result, receipt: await verifyReceipt(receipt, key, expected, fail) };
}

/** The `receipt` error of an answer that did not prove itself (charged when it was paid for). */
function receiptError(path: string, answer: Answer, attempts: number, payment: Payment | undefined): (error: string) => MarketgateError {
  const requestId = answer.headers.get('x-request-id') ?? undefined;
  return (error) => new MarketgateError({ kind: 'receipt', path, status: answer.status, error, requestId, attempts, charged: payment ? true : false, payment });
}

function httpError(path: string, answer: Answer, attempts: number, charged: boolean | 'unknown', signed: SignedPayment | undefined): MarketgateError {
  const body = errorBody(answer.body);
  return new MarketgateError({
    kind: 'http',
    path,
    status: answer.status,
    error: body?.error ?? `HTTP ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`,
    source: body?.source,
    charged,
    requestId: answer.headers.get('x-request-id') ?? undefined,
    attempts,
    payment: signed ? sentPayment(signed) : undefined,
    retryAfterS: retryAfterSeconds(answer.headers),
  });
}

/** A redirect to another origin, not followed: the key and the payment stay with the configured origin. */
function redirected(path: string, url: string, answer: Answer, attempts: number, signed: SignedPayment | undefined): MarketgateError {
  const to = redirectTarget(url, answer.headers);
  const origin = new URL(url).origin;
  const elsewhere = !to.startsWith(`${origin}/`);
  return new MarketgateError({
    kind: 'redirect',
    path,
    status: answer.status,
    error: elsewhere
      ? `the server redirected the call to ${to}, another origin than ${origin}: not followed (the API key and payments are sent to the configured origin only)`
      : `the server redirected the call to ${to} after ${MAX_REDIRECTS} redirects: not followed further`,
    charged: signed ? 'unknown' : false,
    requestId: answer.headers.get('x-request-id') ?? undefined,
    attempts,
    payment: signed ? sentPayment(signed) : undefined,
  });
}

function noAnswer(path: string, o: Extract<Outcome, { kind: 'network' | 'timeout' }>, attempts: number, signed: SignedPayment | undefined): MarketgateError {
  const why = o.kind === 'timeout' ? 'no answer in time' : `no answer: ${describe(o.error)}`;
  const resend = signed ? ' (resend error.payment.signature to get the answer it paid for)' : '';
  return new MarketgateError({
    kind: o.kind,
    path,
    error: `${why} after ${attempts} attempt${attempts === 1 ? '' : 's'}${resend}`,
    charged: signed ? 'unknown' : false,
    attempts,
    payment: signed ? sentPayment(signed) : undefined,
    cause: o.error,
  });
}

/** undici's "fetch failed" says what failed in its cause. */
function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } } | undefined;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
