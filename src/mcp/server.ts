// npm run mcp: a Model Context Protocol server over stdio for agent hosts, its own process beside marketgate
// (the HTTP service keeps no JSON-RPC endpoint). At start it reads the server's /openapi.json and offers one tool
// per data route (tools.ts); each call goes through the typed client, which pays with an API key or x402 within
// MARKETGATE_MAX_SPEND_USD (env.ts). stdout carries the protocol only: everything else goes to stderr.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '../client/index.ts';
import { callTool } from './call-tool.ts';
import { EnvError, readEnv } from './env.ts';
import { toolsFrom, type OpenApiDocument } from './tools.ts';

// A library that prints with console.log would corrupt the protocol stream.
console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
const say = (line: string) => process.stderr.write(`marketgate-mcp: ${line}\n`);

async function main(): Promise<void> {
  const settings = readEnv(process.env);
  const client = createClient(settings.client);
  const doc = (await client.call('/openapi.json')) as OpenApiDocument;
  const tools = toolsFrom(doc);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const ctx = { client, canPay: settings.paysWith !== 'nothing' };

  const server = new Server({ name: 'marketgate', version: doc.info?.version ?? '0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, readOnlyHint: true, openWorldHint: true, idempotentHint: t.access === 'free' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = byName.get(req.params.name);
    if (!tool) return { content: [{ type: 'text', text: `unknown tool ${req.params.name}: the tools are ${[...byName.keys()].join(', ')}` }], isError: true };
    return callTool(ctx, tool, req.params.arguments);
  });
  await server.connect(new StdioServerTransport());
  const payer = settings.paysWith === 'a wallet (x402)' ? ` ${client.payer}, up to $${client.spending().limitUsd}` : '';
  say(`${tools.length} tools from ${settings.client.baseUrl}/openapi.json; paid tools paid with ${settings.paysWith}${payer}`);
}

main().catch((err: unknown) => {
  say(err instanceof EnvError ? err.message : `cannot start: ${(err as Error)?.message ?? String(err)}`);
  process.exit(1);
});
