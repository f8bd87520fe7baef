// npm run mcp: a Model Context Protocol server for agent hosts, its own process beside marketgate (the HTTP
// service keeps no JSON-RPC endpoint). It offers one tool per data route, made from the API's /openapi.json
// (tools.ts, kept a minute: tool-list.ts), on the current protocol (2026-07-28) with the SDK's lane for 2025
// clients. Two ways:
// - stdio (default): one local agent; each call goes through the typed client, which pays with an API key or
//   x402 from a wallet within MARKETGATE_MAX_SPEND_USD (env.ts);
// - `--http`: a remote server over Streamable HTTP (http.ts) whose callers pay, each with its own key or x402
//   payment (remote-call.ts); it holds no funds.
// stdout carries the protocol only (stdio): everything else goes to stderr.
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createClient } from '../client/index.ts';
import { callTool } from './call-tool.ts';
import { EnvError, readEnv } from './env.ts';
import { readHttpEnv } from './http-env.ts';
import { serveHttp } from './http.ts';
import { mcpServer } from './protocol.ts';
import { ToolList } from './tool-list.ts';
import type { OpenApiDocument } from './tools.ts';

// A library that prints with console.log would corrupt the protocol stream.
console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
const say = (line: string) => process.stderr.write(`marketgate-mcp: ${line}\n`);

async function stdio(): Promise<void> {
  const settings = readEnv(process.env);
  const client = createClient(settings.client);
  // The document's x-payment-info terms, when it carries them, let each tool's first paid call skip its 402.
  const tools = new ToolList(async () => {
    const doc = (await client.call('/openapi.json')) as OpenApiDocument;
    client.learnTerms(doc);
    return doc;
  });
  const first = await tools.get();
  // The wallet's unused batch-settlement deposit is asked back when the agent host stops this process.
  const stop = () => void client.close().finally(() => process.exit(0));
  process.once('SIGINT', stop).once('SIGTERM', stop);
  process.stdin.once('end', stop);
  const ctx = { client, canPay: settings.paysWith !== 'nothing' };
  serveStdio(async () => mcpServer(await tools.get(), (tool, args) => callTool(ctx, tool, args)));
  const wallets = [client.payer, client.solanaPayer].filter((a, i, all) => a !== undefined && all.indexOf(a) === i).join(' and ');
  const payer = settings.paysWith === 'a wallet (x402)' ? ` ${wallets}, up to $${client.spending().limitUsd}` : '';
  say(`${first.list.length} tools from ${settings.client.baseUrl}/openapi.json; paid tools paid with ${settings.paysWith}${payer}`);
}

async function http(): Promise<void> {
  const settings = readHttpEnv(process.env);
  const client = createClient({ baseUrl: settings.baseUrl });
  const tools = new ToolList(async () => (await client.call('/openapi.json')) as OpenApiDocument);
  const first = await tools.get();
  const running = await serveHttp({
    host: settings.host,
    port: settings.port,
    trustedProxies: settings.trustedProxies,
    tools,
    remote: { baseUrl: settings.baseUrl, forwardIp: settings.forwardIp },
    onError: (err) => say(`request failed: ${err.message}`),
  });
  const stop = () => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop).once('SIGTERM', stop);
  say(`${first.list.length} tools from ${settings.baseUrl}/openapi.json at ${running.url}; paid tools paid by each caller (API key or x402)${settings.forwardIp ? "; callers' addresses forwarded" : ''}`);
}

(process.argv.includes('--http') ? http() : stdio()).catch((err: unknown) => {
  say(err instanceof EnvError ? err.message : `cannot start: ${(err as Error)?.message ?? String(err)}`);
  process.exit(1);
});
