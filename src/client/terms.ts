// A route's payment terms, kept between calls: the PAYMENT-REQUIRED of its last 402, so that the next call sends
// its payment (an `exact` authorization, or a batch-settlement voucher) with its first request instead of asking
// first and paying second. Terms are kept while they are valid: until the earliest `validUntil` of the offers the
// server signed into them (the offer-receipt extension; an offer lasts the route's maxTimeoutSeconds), or, when
// it signs none, until a 402 says they changed (call.ts then takes the new ones and pays once more). Kept per
// route path (the query is not part of the terms), for a bounded number of paths.
//
// Terms can also be read ahead from /openapi.json, when an operation's `x-payment-info` carries x402's
// `accepts` (protocols[].x402: { x402Version, accepts, extensions }): see fromPaymentInfo.
import type { PaymentRequired } from '@x402/core/types';

/** More paths than marketgate has routes; the oldest is forgotten past it. */
const MAX_PATHS = 256;

interface Kept {
  required: PaymentRequired;
  /** Date.now() past which they are not used (Infinity: until a 402 says otherwise). */
  until: number;
}

export class RouteTerms {
  private readonly byPath = new Map<string, Kept>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The terms to pay `path` with straight away, when valid ones are kept. */
  get(path: string): PaymentRequired | undefined {
    const key = pathOnly(path);
    const kept = this.byPath.get(key);
    if (!kept) return undefined;
    if (kept.until <= this.now()) {
      this.byPath.delete(key);
      return undefined;
    }
    return kept.required;
  }

  /** Keeps a 402's terms for `path` (replacing what was kept). */
  keep(path: string, required: PaymentRequired): void {
    const key = pathOnly(path);
    this.byPath.delete(key);
    const until = validUntil(required);
    if (until <= this.now()) return;
    this.byPath.set(key, { required, until });
    if (this.byPath.size > MAX_PATHS) this.byPath.delete(this.byPath.keys().next().value!);
  }

  forget(path: string): void {
    this.byPath.delete(pathOnly(path));
  }

  /** The paths with terms kept (a refund needs a paid route to ask through). */
  paths(): string[] {
    return [...this.byPath.keys()];
  }
}

const pathOnly = (path: string) => path.split('?')[0]!;

/**
 * The earliest `validUntil` (ms) of the offers signed into the terms; Infinity when none is signed. The offers are
 * read, not verified: they only bound how long the terms are reused, and a wrong one costs a 402.
 */
export function validUntil(required: PaymentRequired): number {
  const offers = (required.extensions?.['offer-receipt'] as { info?: { offers?: unknown } } | undefined)?.info?.offers;
  if (!Array.isArray(offers) || offers.length === 0) return Infinity;
  let earliest = Infinity;
  for (const offer of offers) {
    const seconds = offerValidUntil(offer);
    // An offer that cannot be read bounds nothing it could promise: reuse the terms for no time at all.
    if (seconds === undefined) return 0;
    earliest = Math.min(earliest, seconds * 1000);
  }
  return earliest;
}

/** A signed offer's validUntil (unix seconds): a JWS's payload is its middle part; an EIP-712 offer carries it. */
function offerValidUntil(offer: unknown): number | undefined {
  const o = offer as { format?: unknown; signature?: unknown; payload?: { validUntil?: unknown } } | null;
  let payload: { validUntil?: unknown } | undefined;
  if (o?.format === 'jws' && typeof o.signature === 'string') {
    try {
      payload = JSON.parse(base64UrlText(o.signature.split('.')[1] ?? '')) as { validUntil?: unknown };
    } catch {
      return undefined;
    }
  } else if (o?.format === 'eip712') payload = o.payload;
  const v = Number(payload?.validUntil);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

function base64UrlText(part: string): string {
  const b64 = part.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}

/**
 * The terms an operation's `x-payment-info` carries (`protocols: [{ x402: { x402Version, accepts, extensions } }]`),
 * when it carries usable ones: x402 v2 with at least one `accepts` entry. Its `resource` is the route's URL.
 */
export function fromPaymentInfo(info: unknown, resourceUrl: string): PaymentRequired | undefined {
  const protocols = (info as { protocols?: unknown } | null)?.protocols;
  if (!Array.isArray(protocols)) return undefined;
  for (const p of protocols) {
    const x402 = (p as { x402?: { x402Version?: unknown; accepts?: unknown; extensions?: unknown } } | null)?.x402;
    if (!x402 || x402.x402Version !== 2 || !Array.isArray(x402.accepts) || x402.accepts.length === 0) continue;
    const accepts = x402.accepts.filter(isRequirements);
    if (accepts.length === 0) continue;
    return {
      x402Version: 2,
      resource: { url: resourceUrl, description: '', mimeType: 'application/json' },
      accepts,
      ...(x402.extensions && typeof x402.extensions === 'object' ? { extensions: x402.extensions as Record<string, unknown> } : {}),
    } as PaymentRequired;
  }
  return undefined;
}

function isRequirements(a: unknown): a is PaymentRequired['accepts'][number] {
  const r = a as Record<string, unknown> | null;
  return (
    !!r &&
    typeof r.scheme === 'string' &&
    typeof r.network === 'string' &&
    typeof r.amount === 'string' &&
    /^\d+$/.test(r.amount) &&
    typeof r.asset === 'string' &&
    typeof r.payTo === 'string' &&
    typeof r.maxTimeoutSeconds === 'number'
  );
}
