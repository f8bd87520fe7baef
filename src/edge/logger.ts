// The server's root logger: pino, JSON lines, with the headers that carry credentials censored and every secret
// part of a configured URL (a key in an RPC path, a user:pass@ login) scrubbed from every line, whatever logs it.
// Fastify is given it wrapped by lazyLogger (lazy-logger.ts), and adds its serialisers of req, res and err.
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { scrub, scrubLogObject } from '../upstream/redact-url.ts';

/** Headers that carry credentials: never logged. */
export const REDACTED_HEADERS = ['x-api-key', 'authorization', 'payment-signature', 'x-payment', 'cookie'];

export interface LoggerSettings {
  level: string;
  /** The secret parts of the configured URLs (redact-url.ts's secretParts). */
  secrets: readonly string[];
  /** Where lines go (tests capture them); default stdout. */
  stream?: DestinationStream;
}

export function serverLogger({ level, secrets, stream }: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`]), censor: '[redacted]' },
    formatters: { log: scrubLogObject(secrets) },
    hooks: {
      logMethod(args, method) {
        if (secrets.length) for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = scrub(args[i] as string, secrets);
        method.apply(this, args);
      },
    },
  };
  return stream ? pino(options, stream) : pino(options);
}
