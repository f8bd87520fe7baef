// How agent hosts learn to add the MCP server: /llms.txt and docs/using/mcp.md carry an `mcpServers` entry that parses
// and names only the variables the server reads; docs/using/mcp.md lists them all; the HTTP service itself answers no
// MCP or JSON-RPC request.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_ENV } from '../../src/mcp/env.ts';
import { makeApp, type TestApp } from '../helpers.ts';

let t: TestApp;

beforeAll(async () => {
  t = await makeApp({ PUBLIC_BASE_URL: 'https://api.example.com' });
});

afterAll(async () => {
  await t?.app.close();
});

/** The first ```json block holding an `mcpServers` entry. */
function mcpServersEntry(text: string): { command: string; args: string[]; env: Record<string, string> } {
  const block = [...text.matchAll(/\{\n\s*"mcpServers"[^]*?\n\}/g)][0]?.[0];
  expect(block, 'an mcpServers JSON block').toBeTruthy();
  return (JSON.parse(block!) as { mcpServers: { marketgate: { command: string; args: string[]; env: Record<string, string> } } }).mcpServers.marketgate;
}

describe('adding the MCP server to an agent host', () => {
  it('/llms.txt says how, with this server as MARKETGATE_URL', async () => {
    const text = (await t.app.inject('/llms.txt')).body;
    expect(text).toContain('## Agent hosts (MCP) and a typed client');
    const entry = mcpServersEntry(text);
    expect(entry).toMatchObject({ command: 'npm', args: ['run', '--silent', '--prefix', '/path/to/marketgate', 'mcp'], env: { MARKETGATE_URL: 'https://api.example.com' } });
    for (const name of Object.keys(entry.env)) expect(Object.keys(MCP_ENV)).toContain(name);
    expect(text).toContain('marketgate/client');
  });

  it('docs/using/mcp.md: the same entry, and every variable the server reads', () => {
    const text = readFileSync('docs/using/mcp.md', 'utf8');
    const entry = mcpServersEntry(text);
    expect(entry.args).toEqual(['run', '--silent', '--prefix', '/path/to/marketgate', 'mcp']);
    for (const name of Object.keys(entry.env)) expect(Object.keys(MCP_ENV)).toContain(name);
    for (const name of Object.keys(MCP_ENV)) expect(text).toContain(`| \`${name}\` |`);
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.mcp).toBe('exec node --import tsx src/mcp/server.ts');
  });

  it('docs/paying/client.md links the examples that exist', () => {
    const text = readFileSync('docs/paying/client.md', 'utf8');
    for (const name of ['keyed', 'exact', 'batch']) {
      expect(text).toContain(`](../../examples/${name}.ts)`);
      expect(existsSync(`examples/${name}.ts`)).toBe(true);
    }
  });

  it('the HTTP service has no MCP or JSON-RPC endpoint', async () => {
    for (const path of ['/mcp', '/sse', '/jsonrpc', '/v1/mcp']) {
      const res = await t.app.inject({ method: 'POST', url: path, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(res.statusCode, path).toBe(404);
    }
  });
});
