// The MCP server's parts, without processes: output schemas made from the OpenAPI responses (refs in place,
// OpenAPI 3.0's nullable as JSON Schema), arguments checked before anything is sent, the tool list kept for a
// while and read once at a time, the remote server's settings, and what the remote call sends to the API
// (the caller's key and payment, its address only when told to).
import { readFileSync } from 'node:fs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import { describe, expect, it } from 'vitest';
import { MCP_HTTP_ENV, readHttpEnv } from '../../src/mcp/http-env.ts';
import { callerIp, MAX_IN_FLIGHT, serveHttp } from '../../src/mcp/http.ts';
import { inputFault } from '../../src/mcp/input.ts';
import { toJsonSchema } from '../../src/mcp/json-schema.ts';
import { callRemote } from '../../src/mcp/remote-call.ts';
import { ToolList } from '../../src/mcp/tool-list.ts';
import { toolsFrom, type OpenApiDocument } from '../../src/mcp/tools.ts';

const doc = JSON.parse(readFileSync('openapi/openapi.json', 'utf8')) as OpenApiDocument;
const tools = toolsFrom(doc);
const price = tools.find((t) => t.name === 'price')!;

describe('output schemas from the OpenAPI responses', () => {
  it("every tool's outputSchema is the route's 200 envelope, standing alone (no $ref), and compiles", () => {
    const validator = new AjvJsonSchemaValidator();
    for (const t of tools) {
      expect(t.outputSchema.type, t.name).toBe('object');
      expect(JSON.stringify(t.outputSchema), t.name).not.toMatch(/"\$ref"|"nullable"|"example"/);
      expect(() => validator.getValidator(t.outputSchema as never), t.name).not.toThrow();
    }
    expect(price.outputSchema).toMatchObject({ required: ['data', 'meta'], properties: { meta: { properties: { sources: { items: { required: ['provider', 'fetched_at', 'cached', 'age_s'] } } } } } });
  });

  it('nullable: a null type, a null in an enum, null beside a composition; a ref met again inside itself is left open', () => {
    const components = { Loop: { type: 'object', properties: { next: { $ref: '#/components/schemas/Loop' } } } };
    expect(toJsonSchema({ type: 'string', enum: ['a', 'b'], nullable: true, example: 'a', 'x-note': 1 }, components)).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
    expect(toJsonSchema({ nullable: true, allOf: [{ $ref: '#/components/schemas/Loop' }] }, components)).toEqual({
      anyOf: [{ allOf: [{ type: 'object', properties: { next: {} } }] }, { type: 'null' }],
    });
    expect(toJsonSchema({ $ref: '#/components/schemas/Missing' }, components)).toEqual({});
  });

  it('annotations on every tool; a paid tool says a retry with the same payment is never charged twice', () => {
    const x402 = toolsFrom({ paths: { '/v1/price': { get: { summary: 'Price', 'x-access': 'paid', 'x-price': '$0.001', 'x-payment-info': {} } as never } } })[0]!;
    expect(x402.description).toBe('Price. Access: paid, $0.001 per call, with an API key or x402. A retry with the same payment is never charged twice.');
    expect(x402.annotations).toEqual({ title: 'Price', readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    expect(x402.outputSchema).toEqual({ type: 'object', properties: { data: {} }, required: ['data'] });
    for (const t of tools) expect(t.annotations).toEqual({ title: t.title, readOnlyHint: true, idempotentHint: true, openWorldHint: true });
  });
});

describe('arguments checked before anything is sent', () => {
  it('the first fault, naming the parameter and what it accepts', () => {
    const ohlcv = tools.find((t) => t.name === 'ohlcv')!.inputSchema;
    expect(inputFault(price.inputSchema, { symbol: 'BTC' })).toBeUndefined();
    expect(inputFault(price.inputSchema, { symbol: 'BTC', asset_class: null })).toBeUndefined();
    expect(inputFault(price.inputSchema, {})).toBe("parameter 'symbol' is required");
    expect(inputFault(price.inputSchema, { symbol: 'BTC', x: 1 })).toBe("unknown parameter 'x': this tool takes 'symbol', 'asset_class'");
    expect(inputFault(price.inputSchema, { symbol: ['BTC'] })).toBe("parameter 'symbol' must be a single string, got a list");
    expect(inputFault(price.inputSchema, { symbol: 'B'.repeat(25) })).toBe("parameter 'symbol' must be at most 24 characters long");
    expect(inputFault(ohlcv, { symbol: 'BTC', limit: 2.5 })).toBe("parameter 'limit' must be an integer, got 2.5");
    expect(inputFault(ohlcv, { symbol: 'BTC', limit: '10' })).toBeUndefined();
    expect(inputFault(ohlcv, { symbol: 'BTC', limit: 0 })).toMatch(/^parameter 'limit' must be at least 1, got 0$/);
    const list = { type: 'object' as const, properties: { ids: { type: 'array', items: { type: 'string' } } }, additionalProperties: false as const };
    expect(inputFault(list, { ids: ['a', 'b'] })).toBeUndefined(); // not scalar: the API's to check
  });
});

describe('the tool list, kept for a while', () => {
  it('read once per time to live, one read at a time; a failed read keeps the list it had', async () => {
    let now = 0;
    let reads = 0;
    let fail = false;
    const list = new ToolList(
      async () => {
        reads++;
        if (fail) throw new Error('down');
        return { info: { version: String(reads) }, paths: { '/v1/x': { get: { summary: 'X' } } } };
      },
      1000,
      () => now,
    );
    const [a, b] = await Promise.all([list.get(), list.get()]);
    expect(a).toBe(b);
    expect(reads).toBe(1);
    now = 999;
    expect((await list.get()).version).toBe('1');
    now = 1000;
    expect((await list.get()).version).toBe('2');
    fail = true;
    now = 5000;
    expect((await list.get()).version).toBe('2');
    expect(reads).toBe(3);
    await expect(new ToolList(() => Promise.reject(new Error('down'))).get()).rejects.toThrow('down');
  });
});

describe('the remote server', () => {
  it('settings: loopback and 3100 by default; never the API port; nothing to pay with', () => {
    expect(readHttpEnv({})).toEqual({ baseUrl: 'http://127.0.0.1:3000', host: '127.0.0.1', port: 3100, forwardIp: false, trustedProxies: [] });
    const env = { MARKETGATE_URL: 'https://api.example.com', MARKETGATE_MCP_HOST: '0.0.0.0', MARKETGATE_MCP_PORT: '8080', MARKETGATE_MCP_FORWARD_IP: 'true', MARKETGATE_MCP_TRUST_PROXY: '10.0.0.2, ::1' };
    expect(readHttpEnv(env)).toEqual({ baseUrl: 'https://api.example.com', host: '0.0.0.0', port: 8080, forwardIp: true, trustedProxies: ['10.0.0.2', '::1'] });
    expect(() => readHttpEnv({ MARKETGATE_MCP_TRUST_PROXY: '10.0.0.0/8' })).toThrow('MARKETGATE_MCP_TRUST_PROXY must be IP addresses, comma-separated (no names, no ranges), got "10.0.0.0/8"');
    expect(() => readHttpEnv({ MARKETGATE_MCP_PORT: '3000' })).toThrow("MARKETGATE_MCP_PORT 3000 is the API's own port");
    expect(() => readHttpEnv({ MARKETGATE_MCP_PORT: 'x' })).toThrow('MARKETGATE_MCP_PORT must be a port number');
    expect(() => readHttpEnv({ MARKETGATE_MCP_FORWARD_IP: 'yes' })).toThrow('MARKETGATE_MCP_FORWARD_IP must be true or false');
    expect(() => readHttpEnv({ MARKETGATE_WALLET_KEY: `0x${'ab'.repeat(32)}`, MARKETGATE_API_KEY: 'k' })).toThrow('MARKETGATE_API_KEY, MARKETGATE_WALLET_KEY: not for --http');
    const page = readFileSync('docs/using/mcp.md', 'utf8');
    for (const name of Object.keys(MCP_HTTP_ENV)) expect(page).toContain(`| \`${name}\` |`);
  });

  it("the caller's address: the socket's peer; from a trusted proxy, the last X-Forwarded-For (what the proxy saw)", () => {
    const req = (peer: string, xff?: string) => ({ socket: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as never;
    const trusted = new Set(['10.0.0.2']);
    expect(callerIp(req('::ffff:203.0.113.7', '1.1.1.1'), trusted)).toBe('203.0.113.7');
    expect(callerIp(req('::ffff:10.0.0.2', '1.1.1.1, 198.51.100.9'), trusted)).toBe('198.51.100.9');
    expect(callerIp(req('10.0.0.2', 'garbage'), trusted)).toBe('10.0.0.2');
    expect(callerIp(req('10.0.0.2'), trusted)).toBe('10.0.0.2');
  });

  it("sends the caller's key and payment, its address only when told to; a 402 is x402's payment-required result", async () => {
    const sent: Headers[] = [];
    const required = { x402Version: 2, error: 'payment required', resource: { url: 'http://api/v1/price?symbol=BTC' }, accepts: [] };
    const fetch = (async (_url: string, init?: RequestInit) => {
      sent.push(new Headers(init?.headers));
      return new Response(JSON.stringify({ error: 'payment required' }), { status: 402, headers: { 'payment-required': encodePaymentRequiredHeader(required as never) } });
    }) as typeof globalThis.fetch;
    const payment = { x402Version: 2, accepted: { scheme: 'exact' }, payload: { signature: '0x' } };
    const caller = { apiKey: undefined, ip: '203.0.113.7' };
    const res = await callRemote({ baseUrl: 'http://api', forwardIp: false, fetch }, caller, price, { symbol: 'BTC' }, { 'x402/payment': payment });
    expect(res).toEqual({ isError: true, structuredContent: required, content: [{ type: 'text', text: JSON.stringify(required) }] });
    expect(sent[0]!.get('x-forwarded-for')).toBeNull();
    expect(JSON.parse(Buffer.from(sent[0]!.get('payment-signature')!, 'base64').toString())).toEqual(payment);
    await callRemote({ baseUrl: 'http://api', forwardIp: true, fetch }, { apiKey: 'k', ip: '203.0.113.7' }, price, { symbol: 'BTC' }, undefined);
    expect(sent[1]!.get('x-forwarded-for')).toBe('203.0.113.7');
    expect(sent[1]!.get('x-api-key')).toBe('k');
    expect(sent[1]!.get('payment-signature')).toBeNull();
  });
});

describe('the remote server under pressure', () => {
  it(`serves at most ${MAX_IN_FLIGHT} requests at once: the next gets 503 with Retry-After`, async () => {
    let started = 0;
    let allStarted!: () => void;
    const full = new Promise<void>((r) => (allStarted = r));
    // A tool list that never comes: every request stays in flight once it reaches the protocol instance.
    const tools = { get: () => (++started === MAX_IN_FLIGHT && allStarted(), new Promise<never>(() => {})) } as unknown as ToolList;
    const server = await serveHttp({ host: '127.0.0.1', port: 0, trustedProxies: [], tools, remote: { baseUrl: 'http://127.0.0.1:9', forwardIp: false } });
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const post = () => fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(init) });
    const held = Array.from({ length: MAX_IN_FLIGHT }, () => post().catch(() => undefined));
    try {
      await full;
      const shed = await post();
      expect(shed.status).toBe(503);
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(await shed.json()).toEqual({ error: 'too many requests at once; retry shortly' });
    } finally {
      await server.close();
      await Promise.all(held);
    }
  });
});
