// Run as a child process (`node --import tsx test/startup/loaded-packages.ts`): builds the app from the
// environment as the server does at start-up, up to ready, and prints the npm packages loaded by then as
// a JSON array. ES modules are seen through a resolve hook, CommonJS ones in require's cache.
import { createRequire, register } from 'node:module';
import { Writable } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';

const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;

const { port1, port2 } = new MessageChannel();
const urls = new Set<string>();
port1.on('message', (url: string) => urls.add(url));
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { port: port2 }, transferList: [port2] });

const { loadConfig } = await import('../../src/config.ts');
const { buildApp } = await import('../../src/app.ts');
const app = await buildApp(loadConfig(), { logStream: new Writable({ write: (_chunk, _enc, done) => done() }) });
await app.ready();

// Every URL resolved so far has been posted before this marker's.
const MARKER = 'data:text/javascript,export{}//marker';
await import(MARKER);
while (!urls.has(MARKER)) await new Promise((r) => setTimeout(r, 10));
port1.close();

const packageOf = (path: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
const packages = new Set([...urls, ...Object.keys(createRequire(import.meta.url).cache)].map(packageOf).filter((p) => p !== undefined));
console.log(JSON.stringify([...packages].sort()));
await app.close();
