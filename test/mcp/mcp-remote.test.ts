// The remote MCP server (`--http`) end to end, as its own process beside marketgate on the local chain, driven
// by clients nobody here wrote: @modelcontextprotocol/client 2.x on the 2026-07-28 revision and
// @modelcontextprotocol/sdk 1.x (a 2025 client, as the inspector is) over Streamable HTTP. Tools with their
// output schemas and annotations; a free call whose structured content validates; an API key sent on the
// connection (x-api-key, Bearer); a paid call without payment answering x402's MCP payment-required result,
// paid with the official x402 client's signer in `_meta["x402/payment"]`: settled once, the payer charged once,
// the settlement (with the API's signed receipt) in `_meta["x402/payment-response"]`,
// the same payment resent getting the stored answer; bad input named; the Host check on loopback.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { encodePaymentResponseHeader } from '@x402/core/http';
import { extractReceiptFromResponse, extractReceiptPayload } from '@x402/extensions/offer-receipt';
import { generatePaymentId } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payingClient } from '../payments/x402/paying.ts';
import { KEY, startWorld, type World } from '../client/world.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let w: World;
let gateway: ChildProcess;
let url: string;
let stderr = '';
const clients: { close(): Promise<void> }[] = [];

interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** A 2026-07-28 client (pinned: no fallback to 2025), with these headers on the connection. */
async function modern(headers: Record<string, string> = {}) {
  const client = new Client({ name: 'marketgate-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

/** A 2025 client: @modelcontextprotocol/sdk 1.x. */
async function legacy(headers: Record<string, string> = {}) {
  const client = new Client1({ name: 'marketgate-test', version: '1.0.0' });
  await client.connect(new Transport1(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const validator = new AjvJsonSchemaValidator();
let outputSchemas: Map<string, Record<string, unknown>>;

/** Whether `structuredContent` validates against the tool's declared outputSchema (an error message when not). */
function checkOutput(tool: string, result: ToolResult): string | undefined {
  const check = validator.getValidator(outputSchemas.get(tool)! as never)(result.structuredContent);
  return check.valid ? undefined : check.errorMessage;
}

beforeAll(async () => {
  w = await startWorld({ payerIndex: 12, env: { X402_SIGNING_KEY: `0x${'5a'.repeat(32)}` } });
  gateway = spawn(process.execPath, ['--import', 'tsx', 'src/mcp/server.ts', '--http'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, MARKETGATE_URL: w.base, MARKETGATE_MCP_PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  url = await new Promise<string>((done, fail) => {
    gateway.stderr!.on('data', (d) => {
      stderr += String(d);
      const at = / at (http:\/\/127\.0\.0\.1:\d+\/mcp);/.exec(stderr)?.[1];
      if (at) done(at);
    });
    gateway.once('exit', (code) => fail(new Error(`the gateway exited (${code}): ${stderr}`)));
  });
  const listed = await (await modern()).listTools();
  outputSchemas = new Map(listed.tools.map((t) => [t.name, t.outputSchema as Record<string, unknown>]));
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  gateway?.kill();
  await w?.close();
});

describe('the remote MCP server (Streamable HTTP, its own process)', () => {
  it('starts with a line naming its URL and how paid tools are paid, and is not on the API', () => {
    expect(stderr).toMatch(new RegExp(`marketgate-mcp: \\d+ tools from ${w.base}/openapi.json at ${url}; paid tools paid by each caller \\(API key or x402\\)\\n`));
    expect(new URL(url).port).not.toBe(new URL(w.base).port);
  });

  it('a 2026-07-28 client and a 2025 client list the same tools, with output schemas and annotations', async () => {
    const [m, l] = [await modern(), await legacy()];
    expect(m.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(l.getServerVersion()?.name).toBe('marketgate');
    const [mt, lt] = [(await m.listTools()).tools, (await l.listTools()).tools];
    expect(lt.map((t) => t.name)).toEqual(mt.map((t) => t.name));
    const price = mt.find((t) => t.name === 'price')!;
    expect(price.annotations).toEqual({ title: 'Last price of a crypto pair or a US equity/ETF', readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    expect(price.description).toContain('$0.001 per call, with an API key or x402. A retry with the same payment is never charged twice.');
    expect(price.outputSchema).toMatchObject({ type: 'object', required: ['data', 'meta'], properties: { data: { properties: { price: { type: ['number', 'null'] } } } } });
    for (const t of mt) expect(t.annotations, t.name).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: true, title: t.title });
    expect(lt.find((t) => t.name === 'price')!.outputSchema).toEqual(price.outputSchema);
  });

  it('a free tool on both: the envelope, validating against its outputSchema', async () => {
    for (const client of [await modern(), await legacy()]) {
      const res = (await client.callTool({ name: 'sentiment', arguments: { limit: 2 } })) as ToolResult;
      expect(res.isError).toBeFalsy();
      expect((res.structuredContent as { data: { current: { value: number } } }).data.current.value).toBe(71);
      expect(JSON.parse(res.content[0]!.text!)).toEqual(res.structuredContent);
      expect(checkOutput('sentiment', res)).toBeUndefined();
    }
  });

  it("the caller's API key, sent on the connection (x-api-key, or Bearer), is forwarded: served, nothing paid", async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    for (const client of [await modern({ 'x-api-key': KEY }), await legacy({ authorization: `Bearer ${KEY}` })]) {
      const res = (await client.callTool({ name: 'price', arguments: { symbol: 'BTC' } })) as ToolResult;
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent).toMatchObject({ data: { symbol: 'BTC/USDT', price: 63350.1 } });
      expect(res._meta?.['x402/payment-response']).toBeUndefined();
      expect(checkOutput('price', res)).toBeUndefined();
    }
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before);
  });

  it("a paid tool: x402's payment-required result, then paid in _meta: settled once, charged once; the same payment again gets the stored answer", async () => {
    const client = await modern();
    const before = { payer: await w.fx.balanceOf(w.payer.address), payTo: await w.fx.balanceOf(w.payTo), settles: w.fac.state.calls.settle };
    const unpaid = (await client.callTool({ name: 'price', arguments: { symbol: 'BTC' } })) as ToolResult;
    expect(unpaid.isError).toBe(true);
    const required = unpaid.structuredContent as unknown as PaymentRequired;
    expect(required).toMatchObject({ x402Version: 2, accepts: [{ scheme: 'exact', network: w.chain.network, amount: '1000', asset: w.fx.usdc, payTo: w.payTo }] });
    expect(JSON.parse(unpaid.content[0]!.text!)).toEqual(required);

    const signer = payingClient(w.payer, { network: w.chain.network, asset: w.fx.usdc }, { identifier: generatePaymentId });
    const payment: PaymentPayload = await signer.createPaymentPayload(required);
    const paid = (await client.callTool({ name: 'price', arguments: { symbol: 'BTC' }, _meta: { 'x402/payment': payment } })) as ToolResult;
    expect(paid.isError).toBeFalsy();
    expect(paid.structuredContent).toMatchObject({ data: { symbol: 'BTC/USDT', price: 63350.1 } });
    expect(checkOutput('price', paid)).toBeUndefined();
    const settlement = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string; network: string; payer: string };
    expect(settlement).toMatchObject({ success: true, network: w.chain.network, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(settlement.payer.toLowerCase()).toBe(w.payer.address.toLowerCase());
    // The API's signed receipt travels in the settlement, as in its PAYMENT-RESPONSE header.
    const receipt = extractReceiptFromResponse(new Response(null, { headers: { 'payment-response': encodePaymentResponseHeader(settlement as never) } }));
    expect(receipt && extractReceiptPayload(receipt)).toMatchObject({ network: w.chain.network, payer: w.payer.address, transaction: settlement.transaction });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before.payer - 1000n);
    expect(await w.fx.balanceOf(w.payTo)).toBe(before.payTo + 1000n);

    const again = (await (await legacy()).callTool({ name: 'price', arguments: { symbol: 'BTC' }, _meta: { 'x402/payment': payment } })) as ToolResult;
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(paid.structuredContent);
    expect((again._meta?.['x402/payment-response'] as { transaction: string }).transaction).toBe(settlement.transaction);
    expect(w.fac.state.calls.settle).toBe(before.settles + 1);
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before.payer - 1000n);
  });

  it('a refused payment (a bad signature) is the payment-required result again, with the reason; nothing settled', async () => {
    const client = await modern();
    const required = (await client.callTool({ name: 'price', arguments: { symbol: 'ETH' } })).structuredContent as unknown as PaymentRequired;
    const payment = await payingClient(w.payer, { network: w.chain.network, asset: w.fx.usdc }).createPaymentPayload(required);
    (payment.payload as { signature: string }).signature = `0x${'11'.repeat(65)}`;
    const settles = w.fac.state.calls.settle;
    const refused = (await client.callTool({ name: 'price', arguments: { symbol: 'ETH' }, _meta: { 'x402/payment': payment } })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ x402Version: 2, error: expect.stringMatching(/signature/i), accepts: [expect.objectContaining({ scheme: 'exact' })] });
    expect(JSON.parse(refused.content[0]!.text!)).toEqual(refused.structuredContent);
    expect(w.fac.state.calls.settle).toBe(settles);
  });

  it('examples/mcp-remote.ts, the paying script of docs/using/mcp.md, pays one call as a reader would run it', async () => {
    const before = await w.fx.balanceOf(w.payer.address);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/mcp-remote.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', MARKETGATE_MCP_URL: url, MARKETGATE_WALLET_KEY: w.payerKey, MARKETGATE_ASSETS: `${w.asset.network}:${w.asset.asset}:${w.asset.decimals}` },
    });
    expect(JSON.parse(stdout)).toEqual({ symbol: 'BTC/USDT', price: 63350.1, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payer: w.payer.address });
    expect(await w.fx.balanceOf(w.payer.address)).toBe(before - 1000n);
  });

  it('bad input is a tool error naming it, before any payment is asked', async () => {
    const client = await modern();
    const bad = (await client.callTool({ name: 'price', arguments: { symbol: 'BTC', asset_class: 'bond' } })) as ToolResult;
    expect(bad).toMatchObject({ isError: true, content: [{ type: 'text', text: 'price: parameter \'asset_class\' must be one of crypto, equity, got "bond". Nothing was sent or charged.' }] });
    expect(bad.structuredContent).toBeUndefined();
    const unknown = (await (await legacy()).callTool({ name: 'price', arguments: { symbol: 'BTC', currency: 'EUR' } })) as ToolResult;
    expect(unknown.content[0]!.text).toBe("price: unknown parameter 'currency': this tool takes 'symbol', 'asset_class'. Nothing was sent or charged.");
    const garbage = (await client.callTool({ name: 'price', arguments: { symbol: 'BTC' }, _meta: { 'x402/payment': 'not a payment' } })) as ToolResult;
    expect(garbage.isError).toBe(true);
    expect(garbage.content[0]!.text).toMatch(/^_meta\["x402\/payment"\] must be an x402 PaymentPayload .+ Nothing was charged\.$/);
  });

  it('on loopback, a request naming another Host is refused (DNS rebinding)', async () => {
    // fetch sends the URL's own Host whatever it is given: node:http sends the one named.
    const status = await new Promise<number | undefined>((done, fail) => {
      const req = request(url, { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json' } }, (res) => (res.resume(), done(res.statusCode)));
      req.once('error', fail).end('{}');
    });
    expect(status).toBe(403);
    expect((await fetch(url.replace('/mcp', '/other'), { method: 'POST' })).status).toBe(404);
    // A request target no URL parser takes is a 404 too, and the server lives on.
    const odd = await new Promise<number | undefined>((done, fail) => {
      request(url, { method: 'POST', path: '//' }, (res) => (res.resume(), done(res.statusCode))).once('error', fail).end();
    });
    expect(odd).toBe(404);
    expect((await (await modern()).listTools()).tools.length).toBeGreaterThan(0);
  });
});
