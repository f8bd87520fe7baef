// Compiles contracts/*.sol with solc-js (wasm, offline) into artifacts/<Name>.json = { abi, bytecode, deployedBytecode, sourceHash }.
// Cached by the sha256 of the source: re-running is a no-op unless the .sol changed.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import solc from "solc";

const root = dirname(fileURLToPath(import.meta.url));
export const CONTRACTS = ["TestUSDC", "Multicall3", "BatchSettlement", "ERC3009DepositCollector"] as const;
export type Artifact = { abi: any[]; bytecode: `0x${string}`; deployedBytecode: `0x${string}`; sourceHash: string; solc: string };

export function artifactPath(name: string, dir = root): string {
  return join(dir, "artifacts", `${name}.json`);
}

export function compileAll(log: (m: string) => void = console.log): Record<(typeof CONTRACTS)[number], Artifact> {
  return compileContracts(root, CONTRACTS, log);
}

/** Compiles `dir`/contracts/<Name>.sol (one contract per file, named as the file) into `dir`/artifacts. */
export function compileContracts<N extends string>(dir: string, names: readonly N[], log: (m: string) => void = console.log): Record<N, Artifact> {
  const out = {} as Record<N, Artifact>;
  const sources: Record<string, { content: string }> = {};
  const stale: N[] = [];
  for (const name of names) {
    const content = readFileSync(join(dir, "contracts", `${name}.sol`), "utf8");
    const sourceHash = createHash("sha256").update(content).digest("hex");
    const p = artifactPath(name, dir);
    if (existsSync(p)) {
      const a = JSON.parse(readFileSync(p, "utf8")) as Artifact;
      if (a.sourceHash === sourceHash) { out[name] = a; continue; }
    }
    sources[`${name}.sol`] = { content };
    stale.push(name);
  }
  if (stale.length === 0) return out;
  const t0 = performance.now();
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: "cancun",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e: any) => e.severity === "error");
  if (errors.length) throw new Error(errors.map((e: any) => e.formattedMessage).join("\n"));
  mkdirSync(join(dir, "artifacts"), { recursive: true });
  for (const name of stale) {
    const c = output.contracts[`${name}.sol`][name];
    const content = sources[`${name}.sol`]!.content;
    const a: Artifact = {
      abi: c.abi,
      bytecode: `0x${c.evm.bytecode.object}`,
      deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      sourceHash: createHash("sha256").update(content).digest("hex"),
      solc: solc.version(),
    };
    writeFileSync(artifactPath(name, dir), JSON.stringify(a, null, 2));
    out[name] = a;
  }
  log(`compiled ${stale.join(", ")} with solc ${solc.version()} in ${(performance.now() - t0).toFixed(0)} ms`);
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const arts = compileAll();
  for (const [n, a] of Object.entries(arts)) console.log(`${n}: ${(a.bytecode.length - 2) / 2} bytes initcode, ${a.abi.length} abi entries -> ${artifactPath(n)}`);
}
