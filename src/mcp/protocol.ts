// One MCP server instance over the tool list: tools/list gives each tool with its input and output schemas and
// annotations; tools/call checks the arguments (a fault is a tool error naming the parameter, nothing sent) and
// hands the call to `call`. The same instance serves 2026-07-28 clients and, through the SDK's legacy lane, the
// 2025 ones (initialize handshake), over stdio and Streamable HTTP alike.
import { Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { inputFault } from './input.ts';
import type { Tools } from './tool-list.ts';
import type { ToolSpec } from './tools.ts';

/** `_meta` of the call's request, where a remote caller's x402 payment comes (`x402/payment`). */
export type CallMeta = Record<string, unknown> | undefined;

export type CallHandler = (tool: ToolSpec, args: Record<string, unknown>, meta: CallMeta) => Promise<CallToolResult>;

export function mcpServer(tools: Tools, call: CallHandler): Server {
  const server = new Server({ name: 'marketgate', version: tools.version }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({
    // The schemas are JSON made from JSON (the OpenAPI document): the SDK's JSON value type holds for them.
    tools: tools.list.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations }) as unknown as Tool),
  }));
  server.setRequestHandler('tools/call', async (req): Promise<CallToolResult> => {
    const tool = tools.byName.get(req.params.name);
    if (!tool) return toolError(`unknown tool ${req.params.name}: the tools are ${[...tools.byName.keys()].join(', ')}`);
    const args = req.params.arguments ?? {};
    const fault = inputFault(tool.inputSchema, args);
    if (fault) return toolError(`${tool.name}: ${fault}. Nothing was sent or charged.`);
    return call(tool, args, req.params._meta as CallMeta);
  });
  return server;
}

export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
