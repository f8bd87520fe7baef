// The tool list, made from the API's /openapi.json and kept for a while: the one thing the MCP server holds
// between calls. One entry, read again once it is older than its time to live (so a new route, price or
// schema reaches the tools without a restart); readers at the same moment share one read, and a failed read
// keeps serving the list it had.
import { toolsFrom, type OpenApiDocument, type ToolSpec } from './tools.ts';

export interface Tools {
  list: ToolSpec[];
  byName: Map<string, ToolSpec>;
  /** The API's version (its document's info.version). */
  version: string;
}

/** How long the tool list is kept before the document is read again. */
export const TOOL_LIST_TTL_MS = 60_000;

export class ToolList {
  private entry: { tools: Tools; at: number } | undefined;
  private reading: Promise<Tools> | undefined;

  constructor(
    private readonly read: () => Promise<OpenApiDocument>,
    private readonly ttlMs = TOOL_LIST_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async get(): Promise<Tools> {
    const entry = this.entry;
    if (entry && this.now() - entry.at < this.ttlMs) return entry.tools;
    this.reading ??= this.read()
      .then((doc) => {
        const list = toolsFrom(doc);
        const tools = { list, byName: new Map(list.map((t) => [t.name, t])), version: doc.info?.version ?? '0' };
        this.entry = { tools, at: this.now() };
        return tools;
      })
      .finally(() => (this.reading = undefined));
    try {
      return await this.reading;
    } catch (err) {
      if (entry) return entry.tools;
      throw err;
    }
  }
}
