// How the MCP server makes its tools from an OpenAPI document, and reads its environment: names (collisions
// between the interfaces resolved the same way whatever the document's order), descriptions with price and
// access (x402 on or off), input schemas, and one line naming a bad variable.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { getBase58Decoder } from '@solana/kit';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { readEnv } from '../../src/mcp/env.ts';
import { toolsFrom, type OpenApiDocument } from '../../src/mcp/tools.ts';

const op = (summary: string, extra: Record<string, unknown> = {}) => ({ get: { summary, parameters: [], 'x-access': 'free', ...extra } });

describe('tools from the OpenAPI document', () => {
  it('the committed document (x402 off): every data route, paid ones saying they take an API key only', () => {
    const doc = JSON.parse(readFileSync('openapi/openapi.json', 'utf8')) as OpenApiDocument;
    const tools = toolsFrom(doc);
    expect(tools.map((t) => t.name)).toContain('funding_oi');
    expect(tools.find((t) => t.name === 'price')!.description).toBe('Last price of a crypto pair or a US equity/ETF. Access: paid, $0.001 per call, with an API key (this server takes no x402 payments).');
    expect(tools.find((t) => t.name === 'ohlcv')!.inputSchema.properties).toHaveProperty('limit', expect.objectContaining({ type: 'integer' }));
  });

  it('two interfaces ending in the same segment: the shorter path keeps the name, the other takes its first segment, in any order', () => {
    const paths = { '/risk/v1/price': op('Risk price'), '/v1/price': op('Price', { 'x-access': 'paid', 'x-price': '$0.001', 'x-payment-info': {} }), '/v1/status': op('Status'), '/risk/health': op('Health') };
    const names = (p: Record<string, unknown>) => Object.fromEntries(toolsFrom({ paths: p as never }).map((t) => [t.path, t.name]));
    expect(names(paths)).toEqual({ '/v1/price': 'price', '/risk/v1/price': 'risk_price' });
    expect(names(Object.fromEntries(Object.entries(paths).reverse()))).toEqual({ '/v1/price': 'price', '/risk/v1/price': 'risk_price' });
  });

  it('query parameters as JSON Schema: required marked, OpenAPI-only words dropped, nullable as a null type', () => {
    const [tool] = toolsFrom({
      paths: {
        '/v1/x': {
          get: {
            summary: 'X',
            'x-access': 'key',
            parameters: [
              { name: 'a', in: 'query', required: true, description: 'the a', schema: { type: 'string', pattern: '^[a-z]+$', example: 'abc' } },
              { name: 'b', in: 'query', schema: { type: 'integer', nullable: true, minimum: 1 } },
              { name: 'h', in: 'header', schema: { type: 'string' } },
            ],
          },
        },
      },
    });
    expect(tool).toMatchObject({ name: 'x', access: 'key', description: 'X. Access: API key required; never charged.' });
    expect(tool!.inputSchema).toEqual({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^[a-z]+$', description: 'the a' }, b: { type: ['integer', 'null'], minimum: 1 } },
      required: ['a'],
      additionalProperties: false,
    });
  });
});

describe('the environment', () => {
  it('defaults, a key, a wallet with its limit and test tokens', () => {
    expect(readEnv({})).toEqual({ client: { baseUrl: 'http://127.0.0.1:3000', assets: [] }, paysWith: 'nothing' });
    const key = `0x${'ab'.repeat(32)}`;
    const s = readEnv({ MARKETGATE_URL: 'http://h:1', MARKETGATE_WALLET_KEY: key, MARKETGATE_MAX_SPEND_USD: '0.25', MARKETGATE_ASSETS: 'eip155:31337:0x5FbDB2315678afecb367f032d93F642f64180aa3:6', MARKETGATE_BATCH: 'true', MARKETGATE_RPC_URL: 'http://h:8545' });
    expect(s).toEqual({
      client: { baseUrl: 'http://h:1', wallet: key, maxSpendUsd: 0.25, batch: { rpcUrl: 'http://h:8545', use: true }, assets: [{ network: 'eip155:31337', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 }], rpcUrls: { 'eip155:31337': 'http://h:8545' } },
      paysWith: 'a wallet (x402)',
    });
    expect(readEnv({ MARKETGATE_API_KEY: 'k', MARKETGATE_WALLET_KEY: key }).paysWith).toBe('an API key');
    // MARKETGATE_BATCH: auto (the client's default) unless set; with an RPC, the channel's reads use it.
    expect(readEnv({ MARKETGATE_BATCH: 'false', MARKETGATE_RPC_URL: 'http://h:8545' }).client.batch).toBe(false);
    expect(readEnv({ MARKETGATE_RPC_URL: 'http://h:8545' }).client.batch).toEqual({ rpcUrl: 'http://h:8545', use: 'auto' });
    expect(() => readEnv({ MARKETGATE_BATCH: 'yes' })).toThrow('MARKETGATE_BATCH must be auto, true or false');
  });

  it('MARKETGATE_SOLANA_KEY, MARKETGATE_PREFER and MARKETGATE_SOLANA_RPC_URL: a Solana wallet, which pays, where its transactions are built', () => {
    // A keypair as Solana's tools write it: the 32-byte seed, then its ed25519 public key, in base58.
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const bytes = Buffer.concat([Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'), Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url')]);
    const secret = getBase58Decoder().decode(bytes);
    const s = readEnv({ MARKETGATE_SOLANA_KEY: secret, MARKETGATE_PREFER: 'solana', MARKETGATE_SOLANA_RPC_URL: 'http://h:8899' });
    expect(s).toEqual({
      client: { baseUrl: 'http://127.0.0.1:3000', solanaWallet: secret, prefer: 'solana', assets: [], rpcUrls: { 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'http://h:8899' } },
      paysWith: 'a wallet (x402)',
    });
    expect(createClient(s.client).solanaPayer).toBe(getBase58Decoder().decode(bytes.subarray(32)));
    const devnet = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
    expect(readEnv({ MARKETGATE_SOLANA_RPC_URL: 'http://h:8899', MARKETGATE_RPC_URL: 'http://h:8545', MARKETGATE_NETWORKS: `eip155:8453,${devnet}` }).client.rpcUrls).toEqual({ 'eip155:8453': 'http://h:8545', [devnet]: 'http://h:8899' });
    expect(() => readEnv({ MARKETGATE_SOLANA_KEY: getBase58Decoder().decode(bytes.subarray(32)) })).toThrow(/^MARKETGATE_SOLANA_KEY must be a 64-byte secret key/);
    expect(() => readEnv({ MARKETGATE_SOLANA_KEY: `0x${'ab'.repeat(32)}` })).toThrow(/MARKETGATE_SOLANA_KEY/);
    expect(() => readEnv({ MARKETGATE_PREFER: 'eth' })).toThrow('MARKETGATE_PREFER must be base or solana');
    expect(() => readEnv({ MARKETGATE_SOLANA_RPC_URL: 'h:8899' })).toThrow(/MARKETGATE_SOLANA_RPC_URL/);
  });

  it('MARKETGATE_NETWORKS: the networks the wallet pays on, as the client takes them', () => {
    expect(readEnv({ MARKETGATE_NETWORKS: 'eip155:8453, eip155:84532' }).client.networks).toEqual(['eip155:8453', 'eip155:84532']);
    expect(readEnv({}).client.networks).toBeUndefined(); // the client's default: the networks of MARKETGATE_ASSETS, else Base
  });

  it('MARKETGATE_RPC_URL also releases unused payments: it is the RPC of every EVM network the wallet pays on', () => {
    expect(readEnv({ MARKETGATE_RPC_URL: 'http://h:8545' }).client.rpcUrls).toEqual({ 'eip155:8453': 'http://h:8545' });
    expect(readEnv({ MARKETGATE_RPC_URL: 'http://h:8545', MARKETGATE_NETWORKS: 'eip155:8453,eip155:84532' }).client.rpcUrls).toEqual({ 'eip155:8453': 'http://h:8545', 'eip155:84532': 'http://h:8545' });
    expect(readEnv({}).client.rpcUrls).toBeUndefined();
  });

  it('a bad value names its variable', () => {
    expect(() => readEnv({ MARKETGATE_WALLET_KEY: '0x12' })).toThrow('MARKETGATE_WALLET_KEY must be a private key: 0x followed by 64 hex digits');
    expect(() => readEnv({ MARKETGATE_MAX_SPEND_USD: '$1' })).toThrow('MARKETGATE_MAX_SPEND_USD must be a number of dollars such as 0.10, got "$1"');
    expect(() => readEnv({ MARKETGATE_ASSETS: 'eip155:1:0xabc' })).toThrow(/^MARKETGATE_ASSETS: "eip155:1:0xabc" is not network:address:decimals/);
    expect(() => readEnv({ MARKETGATE_ASSETS: 'eip155:1:0xabc:6' })).toThrow('MARKETGATE_ASSETS: must be a token address (0x + 40 hex digits), got "0xabc"');
    expect(() => readEnv({ MARKETGATE_NETWORKS: 'base,eip155:8453' })).toThrow('MARKETGATE_NETWORKS: must be a CAIP-2 network such as eip155:8453, got "base"');
    expect(() => readEnv({ MARKETGATE_NETWORKS: ' , ' })).toThrow('MARKETGATE_NETWORKS: must be a non-empty list of CAIP-2 networks such as eip155:8453');
  });
});
