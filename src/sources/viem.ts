// viem is loaded the first time an on-chain route needs it, not at start-up: it is ~360 modules (with its
// ENS normaliser, ~0.5 s of CPU to load), and only the on-chain routes' contract reads, ENS lookups and
// unit formatting use it. One promise each, kept: every later call gets the loaded module at once.
type Viem = typeof import('viem');
type ViemEns = typeof import('viem/ens');

let viem: Promise<Viem> | undefined;
let viemEns: Promise<ViemEns> | undefined;

/** viem's main module. */
export function loadViem(): Promise<Viem> {
  return (viem ??= import('viem'));
}

/** viem's ENS module (its name normaliser carries the ENSIP-15 tables). */
export function loadViemEns(): Promise<ViemEns> {
  return (viemEns ??= import('viem/ens'));
}
