// The client and the MCP server stand apart from the HTTP server: src/client (shipped as marketgate/client)
// imports nothing of the server and only the packages a user installs with it; src/mcp talks to marketgate
// through the client alone; and nothing of the HTTP server imports the MCP SDK (it keeps no JSON-RPC endpoint).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const SPECIFIER = /^(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Every module each file under src/ imports: relative ones resolved to paths under src/, packages by name. */
const imports = files(SRC).map((file) => ({
  file: relative(SRC, file),
  specifiers: [...readFileSync(file, 'utf8').matchAll(SPECIFIER)].map((m) => {
    const s = (m[1] ?? m[2])!;
    return s.startsWith('.') ? { local: true, to: relative(SRC, resolve(file, '..', s)) } : { local: false, to: s };
  }),
}));

const under = (folder: string) => imports.filter((i) => i.file.startsWith(`${folder}/`));

describe('client and MCP layers', () => {
  it('finds the files it checks', () => {
    expect(under('client').map((i) => i.file)).toContain('client/call.ts');
    expect(under('mcp').map((i) => i.file)).toContain('mcp/server.ts');
  });

  // @x402/svm and @solana/kit: a Solana wallet pays with the official `exact` SVM client, whose signer is a
  // @solana/kit TransactionSigner (solana-wallet.ts makes it from the secret key); both are dependencies already.
  it('src/client imports only itself, Node, and the x402 packages, viem and @solana/kit', () => {
    const outside = under('client').flatMap((i) =>
      i.specifiers.filter((s) => (s.local ? !s.to.startsWith('client/') : !/^(node:|@x402\/(core|evm|svm|extensions)(\/|$)|viem(\/|$)|@solana\/kit$)/.test(s.to))).map((s) => `${i.file} → ${s.to}`),
    );
    expect(outside).toEqual([]);
  });

  it('src/mcp reaches marketgate through the client only (and the MCP SDK, and x402 core for the remote server\'s terms)', () => {
    const outside = under('mcp').flatMap((i) =>
      i.specifiers.filter((s) => (s.local ? !/^(mcp|client)\//.test(s.to) : !/^(node:|@modelcontextprotocol\/(server|node)(\/|$)|@x402\/core(\/|$))/.test(s.to))).map((s) => `${i.file} → ${s.to}`),
    );
    expect(outside).toEqual([]);
  });

  it('nothing outside src/mcp imports the MCP SDK or src/mcp', () => {
    const users = imports
      .filter((i) => !i.file.startsWith('mcp/'))
      .flatMap((i) => i.specifiers.filter((s) => s.to.startsWith('@modelcontextprotocol') || (s.local && s.to.startsWith('mcp/'))).map((s) => `${i.file} → ${s.to}`));
    expect(users).toEqual([]);
  });
});
