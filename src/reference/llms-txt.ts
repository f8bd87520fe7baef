// /llms.txt: a plain-text summary for language-model clients, generated from the catalog.
import { EVM_CHAINS_TEXT } from '../risk/chains.ts';
import { examplePath, type CatalogEntry } from '../catalog/route.ts';
import type { AccessSummary } from '../catalog/access-summary.ts';
import { accessText } from './access-guide.ts';
import { describeParams } from '../catalog/describe.ts';

export function llmsTxt(entries: CatalogEntry[], baseUrl: string, access: AccessSummary): string {
  const section = (title: string, list: CatalogEntry[]) =>
    [`## ${title}`, '', ...list.flatMap((e) => endpoint(e, baseUrl))].join('\n');
  const risk = entries.filter((e) => e.interface === 'risk');
  const market = entries.filter((e) => e.interface === 'market');
  return [
    '# marketgate',
    '',
    `> A free token risk check (one 0-100 risk score for a token contract on ${EVM_CHAINS_TEXT} or a Solana mint, built from GoPlus Security signals and evidence read from the token's chain, with the raw data and a disclaimer) ` +
      'and a market-data REST API for crypto and US equities. Every success is JSON `{ "data": ..., "meta": { "timestamp", "sources": [...] } }`; every failure is `{ "error": ..., "source"? }`. ' +
      'Numbers come from the named upstream provider or a documented computation over its data; a value the provider did not give is null.',
    '',
    '## Authentication and payment',
    '',
    accessText(access),
    '',
    `OpenAPI 3.0.3: ${baseUrl}/openapi.json — interactive docs: ${baseUrl}/docs — agent card: ${baseUrl}/.well-known/agent.json`,
    '',
    agentHosts(baseUrl, access.x402.enabled),
    '',
    section('Token risk (interface A, free)', risk),
    '',
    section('Market data (interface B)', market),
    '',
  ].join('\n');
}

/**
 * How an agent host adds marketgate's MCP server (docs/using/mcp.md), and where the typed client is
 * (docs/paying/client.md). The configuration follows this server's access: a wallet where it takes x402, a
 * key where it takes keys only (a wallet there would end in "no way to pay").
 */
function agentHosts(baseUrl: string, x402: boolean): string {
  const env = x402
    ? { MARKETGATE_URL: baseUrl, MARKETGATE_WALLET_KEY: '0xYOUR_PRIVATE_KEY', MARKETGATE_MAX_SPEND_USD: '0.10' }
    : { MARKETGATE_URL: baseUrl, MARKETGATE_API_KEY: 'YOUR_API_KEY' };
  const entry = { mcpServers: { marketgate: { command: 'npm', args: ['run', '--silent', '--prefix', '/path/to/marketgate', 'mcp'], env } } };
  const paidWith = x402
    ? 'paid with an API key (MARKETGATE_API_KEY) or x402 (MARKETGATE_WALLET_KEY, within MARKETGATE_MAX_SPEND_USD)'
    : 'paid with an API key (MARKETGATE_API_KEY): this server takes no x402 payment, so a wallet would not pay for anything here';
  return [
    '## Agent hosts (MCP) and a typed client',
    '',
    "marketgate's repository ships a Model Context Protocol server (stdio, its own process; this HTTP service has no JSON-RPC endpoint) whose tools are the data routes below, " +
      `made from /openapi.json, ${paidWith}. In a checkout (npm ci), add to the host's configuration:`,
    '',
    JSON.stringify(entry, null, 2),
    '',
    'For TypeScript: the package export marketgate/client (createClient) has a typed method per route, pays with a key or x402, resends the same payment when it retries, and caps spending.',
  ].join('\n');
}

const ACCESS_WORDS: Record<CatalogEntry['access'], (e: CatalogEntry) => string> = {
  free: () => 'free',
  paid: (e) => `paid, ${e.price}`,
  key: () => 'API key required, never charged',
};

function endpoint(e: CatalogEntry, baseUrl: string): string[] {
  const params = describeParams(e.def.query);
  const example = `${baseUrl}${examplePath(e)}`;
  return [
    `### GET ${e.url} (${ACCESS_WORDS[e.access](e)})`,
    '',
    e.def.description,
    '',
    ...(params.length
      ? ['Parameters:', ...params.map((p) => `- ${p.name} (${p.type}${p.required ? ', required' : ''}${p.default !== undefined ? `, default ${JSON.stringify(p.default)}` : ''}${bounds(p)}): ${p.description}`), '']
      : []),
    `Example: ${example}`,
    '',
  ];
}

function bounds(p: { minimum?: number; maximum?: number; enum?: unknown[] }): string {
  const parts = [];
  if (p.enum) parts.push(`one of ${p.enum.join(', ')}`);
  if (p.minimum !== undefined) parts.push(`min ${p.minimum}`);
  if (p.maximum !== undefined) parts.push(`max ${p.maximum}`);
  return parts.length ? `, ${parts.join(', ')}` : '';
}
