// The MCP server end to end, driven by the SDK's own Client over stdio: the process spawned as an agent host
// spawns it (`node --import tsx src/mcp/server.ts`, and `npm run --silent mcp`), calling marketgate on the local
// chain. Tools listed from the served OpenAPI document, a free tool, a keyed tool, a paid tool paid with x402,
// errors (the API's error and source, and whether anything was charged), a paid tool with nothing to pay with;
// and nothing but protocol on stdout. The same process serves a 2026-07-28 client (@modelcontextprotocol/client
// 2.x), and what every tool answers validates against the outputSchema it declares.
import { Client as Client2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioTransport2 } from '@modelcontextprotocol/client/stdio';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startWorld, TICKER, type World } from '../client/world.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let w: World;

interface Running {
  client: Client;
  /** Errors the client's transport met: a line on stdout that is not protocol would be one. */
  errors: Error[];
  stderr(): string;
}
const running: Running[] = [];

/** An MCP server process with this environment, connected to an SDK client. */
async function mcp(env: Record<string, string>, command: string[] = [process.execPath, '--import', 'tsx', 'src/mcp/server.ts']): Promise<Running> {
  const transport = new StdioClientTransport({ command: command[0]!, args: command.slice(1), cwd: ROOT, env: { MARKETGATE_URL: w.base, ...env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += String(d)));
  const client = new Client({ name: 'marketgate-test', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (e) => void errors.push(e);
  await client.connect(transport);
  const r = { client, errors, stderr: () => stderr };
  running.push(r);
  return r;
}

const validator = new AjvJsonSchemaValidator();
/** undefined when `res.structuredContent` validates against `tool`'s outputSchema as `r` lists it; else why not. */
async function invalidOutput(r: Running, tool: string, res: CallToolResult): Promise<string | undefined> {
  const schema = (await r.client.listTools()).tools.find((t) => t.name === tool)!.outputSchema!;
  const check = validator.getValidator(schema as never)(res.structuredContent);
  return check.valid ? undefined : check.errorMessage;
}

const call = async (r: Running, name: string, args: Record<string, unknown> = {}) => (await r.client.callTool({ name, arguments: args })) as CallToolResult;
const text = (res: CallToolResult) => (res.content[0] as { type: 'text'; text: string }).text;

let wallet: Running;
let keyed: Running;
let none: Running;
let modern: Client2;

/** A 2026-07-28 client (pinned: no fallback) on a server process with an API key. */
async function modernClient(): Promise<Client2> {
  const client = new Client2({ name: 'marketgate-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StdioTransport2({ command: process.execPath, args: ['--import', 'tsx', 'src/mcp/server.ts'], cwd: ROOT, env: { MARKETGATE_URL: w.base, MARKETGATE_API_KEY: KEY }, stderr: 'ignore' }));
  running.push({ client: client as unknown as Client, errors: [], stderr: () => '' });
  return client;
}

beforeAll(async () => {
  w = await startWorld({ payerIndex: 11 });
  const assets = `${w.asset.network}:${w.asset.asset}:${w.asset.decimals}`;
  [wallet, keyed, none, modern] = await Promise.all([
    mcp({ MARKETGATE_WALLET_KEY: w.payerKey, MARKETGATE_ASSETS: assets, MARKETGATE_MAX_SPEND_USD: '0.05' }),
    mcp({ MARKETGATE_API_KEY: KEY }, ['npm', 'run', '--silent', 'mcp']),
    mcp({}),
    modernClient(),
  ]);
}, 120_000);

afterAll(async () => {
  for (const r of running) await r.client.close();
  await w?.close();
});

describe('the MCP server (stdio)', () => {
  it("lists one tool per data route of the served OpenAPI document, named after the path's last segment", async () => {
    const { tools } = await none.client.listTools();
    const doc = (await (await fetch(`${w.base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    const dataRoutes = Object.keys(doc.paths).filter((p) => !/\/(health|status|usage)$/.test(p));
    expect(tools).toHaveLength(dataRoutes.length);
    const names = tools.map((t) => t.name);
    for (const name of ['price', 'ohlcv', 'funding_oi', 'token_risk', 'chain_balance', 'sentiment', 'gas', 'long_short_ratio']) expect(names).toContain(name);
    for (const name of ['health', 'status', 'usage', 'risk_health', 'risk_status']) expect(names).not.toContain(name);
    const price = tools.find((t) => t.name === 'price')!;
    expect(price.description).toBe('Last price of a crypto pair or a US equity/ETF. Access: paid, $0.001 per call, with an API key or x402. A retry with the same payment is never charged twice.');
    expect(price.inputSchema).toMatchObject({ type: 'object', required: ['symbol'], additionalProperties: false, properties: { symbol: { type: 'string', maxLength: 24 }, asset_class: { type: 'string', enum: ['crypto', 'equity'] } } });
    expect(tools.find((t) => t.name === 'sentiment')!.description).toBe('Crypto Fear & Greed Index (alternative.me): current reading and daily history. Access: free.');
    expect(tools.find((t) => t.name === 'token_risk')!.inputSchema.required).toEqual(['address', 'chain']);
  });

  it('a free tool: the envelope as JSON text and as structured content', async () => {
    const res = await call(none, 'sentiment', { limit: 2 });
    expect(res.isError).toBeFalsy();
    expect((res.structuredContent as { data: { current: { value: number } } }).data.current.value).toBe(71);
    expect(JSON.parse(text(res))).toEqual(res.structuredContent);
  });

  it('a keyed tool (the server started with `npm run --silent mcp`): served on the key, nothing paid', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    const res = await call(keyed, 'price', { symbol: 'BTC' });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ data: { symbol: 'BTC/USDT', price: 63350.1 } });
    expect(res._meta).toBeUndefined();
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
  });

  it('a paid tool paid with x402 on the local chain', async () => {
    const before = { payer: await w.fx.balanceOf(w.payer.address), payTo: await w.fx.balanceOf(w.payTo) };
    const res = await call(wallet, 'price', { symbol: 'BTC' });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ data: { symbol: 'BTC/USDT' } });
    expect(res._meta).toMatchObject({ 'marketgate/payment': { scheme: 'exact', network: w.chain.network, chargedUsd: '0.001', identifier: expect.stringMatching(/^pay_/), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
    expect(await invalidOutput(wallet, 'price', res)).toBeUndefined();
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before.payer - 1000n);
    expect(await w.fx.balanceOf(w.payTo)).toBe(before.payTo + 1000n);
  });

  it("errors are tool errors with the API's error and source, saying whether anything was charged", async () => {
    const bad = await call(keyed, 'price', { symbol: 'BTC', asset_class: 'bond' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toBe('price: parameter \'asset_class\' must be one of crypto, equity, got "bond". Nothing was sent or charged.');
    w.upstream.route(`GET ${TICKER}`, { status: 451, body: { code: 0, msg: 'Service unavailable from a restricted location' } });
    w.upstream.route('GET /products/BTC-USD/ticker', { status: 404, body: { message: 'NotFound' } });
    try {
      const before = await w.fx.balanceOf(w.payer.address);
      const failed = await call(wallet, 'price', { symbol: 'BTC' });
      expect(failed.isError).toBe(true);
      expect(text(failed)).toMatch(/^marketgate \/v1\/price: (404|502) .+ \(source: (binance|coinbase)\)\. Nothing was charged\.$/);
      expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
    } finally {
      w.serveNormally();
    }
  });

  it('a 2026-07-28 client (@modelcontextprotocol/client 2.x) lists and calls the same tools; answers validate against their outputSchema', async () => {
    const client = modern;
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual((await keyed.client.listTools()).tools.map((t) => t.name).sort());
    for (const [name, args] of [['price', { symbol: 'BTC' }], ['sentiment', {}]] as const) {
      const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(res.isError, name).toBeFalsy();
      const check = validator.getValidator(tools.find((t) => t.name === name)!.outputSchema as never)(res.structuredContent);
      expect(check.errorMessage, name).toBeUndefined();
    }
  });

  it('a paid tool with neither key nor wallet says how to configure one', async () => {
    const res = await call(none, 'price', { symbol: 'BTC' });
    expect(res.isError).toBe(true);
    expect(text(res)).toBe(
      'price is not free (Access: paid, $0.001 per call, with an API key or x402.) and this MCP server has no way to pay: set MARKETGATE_API_KEY (an API key from the operator) or MARKETGATE_WALLET_KEY (a private key whose USDC pays per call with x402) in the environment of its mcpServers entry, then restart it. Nothing was charged.',
    );
  });

  it('stdout carries the protocol only; the start-up line goes to stderr', () => {
    for (const r of [wallet, keyed, none]) expect(r.errors).toEqual([]);
    expect(wallet.stderr()).toMatch(new RegExp(`marketgate-mcp: \\d+ tools from ${w.base}/openapi.json; paid tools paid with a wallet \\(x402\\) ${w.payer.address}, up to \\$0.05`));
    expect(none.stderr()).toMatch(/paid tools paid with nothing/);
  });
});
