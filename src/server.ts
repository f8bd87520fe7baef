// Start-up: read the config (the environment, over `.env` when there is one; stop with a clear message if
// it is invalid), build the app, listen, and shut down gracefully on SIGINT/SIGTERM.
import { format } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp, startStorage } from './app.ts';
import { ConfigError, ENV_SPEC, loadConfig } from './config.ts';
import { keepFilesOwnerOnly } from './db/data-dir.ts';
import { explainConfigError, loadEnvFile, unknownEnvFileNames, type EnvFile } from './lib/env.ts';
import { loadHttpLibrary } from './upstream/http-client.ts';

/**
 * The old generation may grow by half its live size before a full collection (V8 chooses between 1.1 and 4
 * times by its own measure, and under a fast turnover of cached answers chooses the most). Cached answers live
 * long enough to be promoted, so a cache that turns over fills the old generation with evicted entries until
 * the next full collection: with V8's choice, 8,000 distinct /v1/ohlcv variants grew RSS by 240 to 360 MB with
 * 48 MB in the cache; with this, by about 150 MB (npm run bench, memory). The cached path promotes almost
 * nothing, so it runs no more full collections for it. Set before anything is allocated in earnest.
 */
setFlagsFromString('--heap-growing-percent=50');

async function main(): Promise<void> {
  // Every file the server creates (the database's, the admin socket) is its operator's alone, whatever the umask it was started with.
  keepFilesOwnerOnly();
  let config;
  let envFile: EnvFile | undefined;
  try {
    envFile = loadEnvFile();
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(explainConfigError(err, envFile));
      process.exit(1);
    }
    throw err;
  }

  const app = await buildApp(config);
  routeConsoleToLogger(app.log);
  // The names only: a value may be a secret.
  if (envFile) app.log.info({ file: envFile.path, variables: envFile.names }, `read ${envFile.names.length} settings from .env (the environment's own take precedence)`);
  const unknownInFile = envFile && unknownEnvFileNames(envFile, ENV_SPEC);
  if (unknownInFile) app.log.warn(unknownInFile);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  // Before the port: DATA_DIR is checked and made owner-only, and its admin socket taken. A DATA_DIR others
  // may write, or one another instance already serves, stops start-up here with a message naming it.
  await app.services.admin.listen();
  // The reference documents, with their gzip and brotli forms, before the port: the first client to ask for
  // /openapi.json compressed gets it compressed (zlib runs on libuv's thread pool; a failure is logged, and
  // each document is then made on its first request).
  await app.ready();
  await app.reference.build().catch((err: Error) => app.log.error({ err: err.message }, 'the reference documents could not be made; each is made on its first request'));
  await app.listen({ port: config.port, host: config.host });
  // The HTTP client's library was left out of start-up: loaded in the background a moment later (after the
  // first health checks), so the first upstream call need not wait for it (an earlier one loads it itself).
  setTimeout(() => void loadHttpLibrary(), HTTP_LIBRARY_AFTER_MS).unref();
  // After listening: /health answers while the database opens (PGlite takes seconds the first time).
  await startStorage(app);
}

/** How long after listening the HTTP client's library is loaded in the background. */
const HTTP_LIBRARY_AFTER_MS = 1000;

/**
 * Libraries that print with console (the x402 SDK warns that way) go through the logger instead, so
 * stdout stays JSON lines: one line each, at the matching level, never a bare multi-line stack trace.
 */
function routeConsoleToLogger(log: FastifyBaseLogger): void {
  const line = (args: unknown[]) => format(...args).replace(/\s*\n\s*/g, ' | ');
  console.log = console.info = (...args: unknown[]) => log.info({ console: true }, line(args));
  console.warn = (...args: unknown[]) => log.warn({ console: true }, line(args));
  console.error = (...args: unknown[]) => log.error({ console: true }, line(args));
  console.debug = (...args: unknown[]) => log.debug({ console: true }, line(args));
}

main().catch((err) => {
  console.error('failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
