// zod pieces for providers' wire formats: numbers sent as strings, times as ms or s.
import { z } from 'zod';

/** A decimal sent as a string (or a number): "0.00010000" → 0.0001. Rejects "", NaN, Infinity. */
export const decimal = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
  if (!Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: 'expected a decimal number' });
    return z.NEVER;
  }
  return n;
});

/** Like `decimal`, but a provider's null or "" means "not given" → null. */
export const optionalDecimal = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) return null;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isFinite(n)) {
      ctx.addIssue({ code: 'custom', message: 'expected a decimal number' });
      return z.NEVER;
    }
    return n;
  });

/** Epoch milliseconds as a number or numeric string (Binance's docs and live answers differ) → number. */
export const epochMs = z.union([z.number(), z.string().regex(/^\d+$/)]).transform(Number);

/** Epoch milliseconds (number or numeric string) → ISO-8601 UTC. */
export const msTime = z.union([z.number(), z.string().regex(/^\d+$/)]).transform((v) => new Date(Number(v)).toISOString());

/** Epoch seconds (number or numeric string) → ISO-8601 UTC. */
export const secondsTime = z.union([z.number(), z.string().regex(/^\d+$/)]).transform((v) => new Date(Number(v) * 1000).toISOString());

export const isoFromMs = (ms: number) => new Date(ms).toISOString();
