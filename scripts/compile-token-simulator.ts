// Compiles src/sources/token-simulator.sol with solc-js (the exact compiler version the source pins, offline)
// and, run directly, writes its runtime code into src/sources/token-simulator-code.ts:
//   node --import tsx scripts/compile-token-simulator.ts
// test/sources/token-simulator.test.ts compiles it again and checks that the constant is this source's code.
// Settings: optimizer on (200 runs); EVM version london, so the code runs on every chain the check covers
// (no PUSH0, MCOPY or transient storage); no metadata hash appended, so the code depends on the source alone.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import solc from 'solc';

const SOURCE = fileURLToPath(new URL('../src/sources/token-simulator.sol', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../src/sources/token-simulator-code.ts', import.meta.url));

export interface CompiledSimulator {
  /** The deployed (runtime) code, 0x-prefixed. */
  runtime: `0x${string}`;
  abi: unknown[];
  compiler: string;
}

export function compileTokenSimulator(): CompiledSimulator {
  const input = {
    language: 'Solidity',
    sources: { 'token-simulator.sol': { content: readFileSync(SOURCE, 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'london',
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: { '*': { TokenSimulator: ['abi', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n'));
  const contract = output.contracts['token-simulator.sol'].TokenSimulator;
  return { runtime: `0x${contract.evm.deployedBytecode.object}`, abi: contract.abi, compiler: solc.version() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { runtime, compiler } = compileTokenSimulator();
  const lines = runtime.match(/.{1,120}/g)!;
  writeFileSync(
    OUTPUT,
    [
      '// The runtime code of src/sources/token-simulator.sol, compiled by scripts/compile-token-simulator.ts',
      `// (solc ${compiler}; optimizer 200 runs, EVM london, no metadata hash). Generated: do not edit;`,
      '// test/sources/token-simulator.test.ts recompiles the source and fails when this is not its code.',
      'export const TOKEN_SIMULATOR_RUNTIME = (',
      ...lines.map((l, i) => `  '${l}'${i === lines.length - 1 ? '' : ' +'}`),
      ') as `0x${string}`;',
      '',
    ].join('\n'),
  );
  console.log(`wrote ${OUTPUT}: ${(runtime.length - 2) / 2} bytes of runtime code (solc ${compiler})`);
}
