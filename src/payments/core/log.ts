// The logger the payments core writes to: what it calls of one, so the core names no framework (Fastify's
// logger, pino, is one; a test's memory log another).
export interface PaymentLog {
  info(obj: object, msg?: string): void;
  info(msg: string): void;
  warn(obj: object, msg?: string): void;
  warn(msg: string): void;
  error(obj: object, msg?: string): void;
  error(msg: string): void;
  debug(obj: object, msg?: string): void;
  debug(msg: string): void;
}
