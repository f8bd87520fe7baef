// Fastify gives every request a child logger (bound to its request id) before any hook runs. pino's
// child() costs several µs (its bindings are serialised, its prototype chain and redaction set up),
// measured as a fifth of a cached answer's own cost, and most requests never log anything at the
// configured level. The child made here becomes pino's child on the first call that would write a
// line; a call below the level costs one comparison. Log lines keep their request id as before.
// Fastify is given the root logger wrapped (lazyLogger), so that its own child factory makes these.
import { LogController, type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

type Bindings = Record<string, unknown>;
type ChildOptions = Parameters<Logger['child']>[1];
type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

class LazyChildLogger {
  constructor(
    private readonly parent: Logger,
    private readonly own: Bindings,
    private readonly options: ChildOptions,
    /** The pino logger once made (given at once for the root: lazyLogger). */
    private made?: Logger,
  ) {}

  private real(): Logger {
    return (this.made ??= this.parent.child(this.own, this.options) as unknown as Logger);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.made ? this.made.bindings() : { ...this.parent.bindings(), ...this.own };
  }

  /** A child that is lazy in turn (made on first use), unless it has a level of its own, which must hold from the start. */
  child(bindings: Bindings, options?: ChildOptions): Logger {
    if (options?.level !== undefined) return this.real().child(bindings, options) as unknown as Logger;
    return new LazyChildLogger(this.real(), bindings, options) as unknown as Logger;
  }

  silent(): void {}

  private write(level: Level, args: unknown[]): void {
    if (!(this.made ?? this.parent).isLevelEnabled(level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
}

/**
 * The logger to give Fastify (`loggerInstance`): `logger` itself for the lines it writes, and children —
 * every request's, made by Fastify's own factory — made only when they write a line. (Fastify checks a
 * child made by a factory of one's own for every method, on every request; its own factory it trusts.)
 */
export function lazyLogger(logger: Logger): FastifyBaseLogger {
  return new LazyChildLogger(logger, {}, undefined, logger) as unknown as FastifyBaseLogger;
}

const INFO_OR_BELOW = new Set(['trace', 'debug', 'info']);

/**
 * Fastify's request log lines ("incoming request", "request completed") are at info: below that level
 * they are not built at all (Fastify would build each line's object and ask the logger per request).
 * Errors are logged as before, at every level that shows them.
 */
export function requestLogController(level: string): LogController {
  const infoShown = INFO_OR_BELOW.has(level);
  return new (class extends LogController {
    override incomingRequest(...args: Parameters<LogController['incomingRequest']>): void {
      if (infoShown) super.incomingRequest(...args);
    }
    override requestCompleted(...args: Parameters<LogController['requestCompleted']>): void {
      if (infoShown || args[0]) super.requestCompleted(...args);
    }
  })();
}
