// What Binance spot and USD-M futures share: the `{code, msg}` error body (sent with HTTP 400).
// -1121 "Invalid symbol" is an answer (our 404); any other code is a provider failure (502).
import { z } from 'zod';
import { NotFoundError } from '../http/errors.ts';
import { fetchSource, type SourceDeps, type Sourced } from '../http/fetch-source.ts';

const INVALID_SYMBOL = -1121;
const errorBody = z.object({ code: z.number(), msg: z.string() });

type Answer<T> = { ok: true; data: T } | { ok: false; code: number; msg: string };

/** The documented body, or Binance's error body. */
function orError<S extends z.ZodType>(schema: S) {
  return z.unknown().transform((body, ctx): Answer<z.output<S>> => {
    const err = errorBody.safeParse(body);
    if (err.success) return { ok: false, ...err.data };
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return { ok: true, data: parsed.data };
  });
}

export interface BinanceGet<S extends z.ZodType> {
  source: string;
  baseUrl: string;
  path: string;
  params: Record<string, string | number>;
  schema: S;
  ttlS: number;
  /** The 404 message for an unknown symbol. */
  notFound: string;
}

export async function binanceGet<S extends z.ZodType>(deps: SourceDeps, req: BinanceGet<S>): Promise<Sourced<z.output<S>>> {
  const qs = new URLSearchParams(Object.entries(req.params).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await fetchSource(deps, {
    source: req.source,
    url: `${req.baseUrl}${req.path}${qs ? `?${qs}` : ''}`,
    schema: orError(req.schema),
    acceptStatus: [400],
    providerError: (b) => (b.ok || b.code === INVALID_SYMBOL ? undefined : `code ${b.code} (${b.msg})`),
    ttlS: req.ttlS,
  });
  const answer = res.data as Answer<z.output<S>>;
  if (!answer.ok) throw new NotFoundError(req.notFound, req.source);
  return { data: answer.data, meta: res.meta };
}
