// What an EVM token's contract says about itself, read over JSON-RPC with nothing sent to the chain:
// whether the address holds code; whether it is a proxy (EIP-1967 implementation, admin and beacon slots,
// EIP-1822's PROXIABLE slot, EIP-1167 minimal proxy code) and who can upgrade it; owner() and whether it is
// renounced; and a buy-transfer-sell simulation through the chain's V2-style router (token-simulator.ts).
// The first round of reads runs in parallel; a beacon's implementation and owner are a second round. The
// liquidity, capabilities, owner kind and impersonation reads (evm-evidence-extras.ts) start with the first round.
// A value the chain did not give is null beside its reason.
import { UpstreamError } from '../lib/errors.ts';
import { startEvidenceExtras, type EvidenceExtrasSettings, type ExtrasPart } from './evm-evidence-extras.ts';
import type { OwnerKindEvidence } from './evm-owner-kind.ts';
import { decodeSimulation, revertReason, simulationParams, taxPct, type FailedStep, type SimulationResult } from './token-simulator.ts';
import { TOKEN_SIMULATOR_RUNTIME } from './token-simulator-code.ts';
import { noRestrictions, readRestrictions, type Gap, type RestrictionSettings, type Restrictions } from './token-restrictions.ts';
import type { LaterBlock } from './block-override.ts';
import type { RpcAnswer, RpcCall } from './evm-abi.ts';

export type { RpcAnswer, RpcCall } from './evm-abi.ts';

export type ProxyKind = 'eip1967' | 'eip1967_beacon' | 'eip1822' | 'eip1167';

export interface ProxyEvidence {
  kind: ProxyKind;
  implementation: string | null;
  /** Who can upgrade it, as far as the chain says; null beside `admin_source` null when it cannot be read. */
  admin: string | null;
  /** Where `admin` was read: the EIP-1967 admin slot, the beacon's owner(), or (UUPS, EIP-1822) the contract's owner(). */
  admin_source: 'eip1967_admin_slot' | 'beacon_owner' | 'owner' | null;
  /** The EIP-1967 beacon (eip1967_beacon only). */
  beacon: string | null;
  /** False for an EIP-1167 clone: its implementation is fixed in its code. */
  upgradeable: boolean;
}

/** The buy-transfer-sell simulation, and the trading restrictions simulated after it (token-restrictions.ts). */
export type SimulationEvidence = TradeSimulation & Restrictions;

/** The buy-transfer-sell simulation's own figures. */
export interface TradeSimulation {
  router: string;
  pair: string;
  /** Wrapped native coin spent on the buy, in its smallest unit. */
  buy_amount: string;
  buy_tax_pct: number | null;
  transfer_tax_pct: number | null;
  sell_tax_pct: number | null;
  transfer_ok: boolean | null;
  /** Whether the sell went through; null when it could not be tried (the buy failed or gave nothing). */
  sell_ok: boolean | null;
  failed_step: FailedStep | null;
  revert_reason: string | null;
}

export interface EvmTokenEvidence extends ExtrasPart {
  /** The latest block when the reads began; the later rounds are pinned to it. null when the node did not say. */
  block_number: number | null;
  has_code: boolean;
  proxy: ProxyEvidence | null;
  /** The owner, what kind of account it is (null: its code could not be read), and a Safe's or a timelock's figures. */
  owner: ({ address: string; renounced: boolean } & OwnerKindEvidence) | null;
  owner_unavailable: string | null;
  simulation: SimulationEvidence | null;
  simulation_unavailable: string | null;
  /** The signals the chain could not determine, with why: moved to `data.data_gaps` by the risk check, not shown here. */
  gaps: Gap[];
}

/** No stablecoin, no lockers, no canonical tokens: the extras' settings when none are given. */
const NO_EXTRAS: EvidenceExtrasSettings = { stable: undefined, lockers: [], canonical: [] };

export interface DexSettings {
  router: string | undefined;
  wrappedNative: string;
  /** The trading-restriction checks' settings; without them only the first simulation runs. */
  restrictions?: RestrictionSettings;
}

// EIP-1967: bytes32(uint256(keccak256('eip1967.proxy.<name>')) - 1); EIP-1822: keccak256("PROXIABLE").
export const SLOTS = {
  implementation: '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc',
  admin: '0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103',
  beacon: '0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50',
  proxiable: '0xc5f16f0fcc639fa48a6947836d9850f504798523bf8c9a3a87d5876cf622bcf7',
} as const;

/** EIP-1167's runtime code around the implementation address. */
const MINIMAL_PROXY = /^0x363d3d373d3d3d363d73([0-9a-f]{40})5af43d82803e903d91602b57fd5bf3$/;

const OWNER = '0x8da5cb5b'; // owner()
const IMPLEMENTATION = '0x5c60da1b'; // implementation()

/** Renounced: the zero address or a burn address. */
const RENOUNCED = new Set(['0x0000000000000000000000000000000000000000', '0x000000000000000000000000000000000000dead', '0xdead000000000000000042069420694206942069']);
export const isRenounced = (address: string) => RENOUNCED.has(address.toLowerCase());

const ZERO_WORD = /^0x0*$/;

/** The address in a 32-byte word (its upper 12 bytes zero), or null. */
function wordAddress(hex: unknown): string | null {
  if (typeof hex !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(hex)) return null;
  if (!/^0x0{24}/.test(hex)) return null;
  return `0x${hex.slice(26).toLowerCase()}`;
}

/** The result of an answer that must not be an error (getCode, getStorageAt): an error is the node's failure. */
function resultOf(source: string, method: string, answer: RpcAnswer): string {
  if ('error' in answer) throw new UpstreamError(source, 'provider', `${source} error: ${method} answered ${answer.error.message}`);
  if (typeof answer.result !== 'string' || !/^0x[0-9a-fA-F]*$/.test(answer.result)) {
    throw new UpstreamError(source, 'schema', `${source} returned an unexpected response shape at result (${method})`);
  }
  return answer.result.toLowerCase();
}

/** owner() of a contract: its address, or why there is none. */
function readOwner(answer: RpcAnswer): { address: string } | { unavailable: string } {
  if ('error' in answer) return { unavailable: 'the contract has no owner() function (the call reverted)' };
  const address = wordAddress(answer.result);
  if (address !== null) return { address };
  return { unavailable: answer.result === '0x' ? 'the contract has no owner() function (empty answer)' : 'owner() did not return an address' };
}

const call = (to: string, data: string) => [{ to, data }, 'latest'];

export async function readEvmTokenEvidence(source: string, rpc: RpcCall, token: string, dex: DexSettings, extrasSettings = NO_EXTRAS): Promise<EvmTokenEvidence> {
  const slot = (name: keyof typeof SLOTS) => rpc('eth_getStorageAt', [token, SLOTS[name], 'latest']).then((a) => resultOf(source, 'eth_getStorageAt', a));
  const ownerCall = rpc('eth_call', call(token, OWNER));
  const extras = startEvidenceExtras(rpc, token, dex, extrasSettings, ownerCall.then(ownerForLiquidity));
  const [head, code, implementation, admin, beacon, proxiable, ownerAnswer, { first, ...simulation }] = await Promise.all([
    rpc('eth_getBlockByNumber', ['latest', false]).then(readHead),
    rpc('eth_getCode', [token, 'latest']).then((a) => resultOf(source, 'eth_getCode', a)),
    slot('implementation'),
    slot('admin'),
    slot('beacon'),
    slot('proxiable'),
    ownerCall,
    simulate(source, rpc, token, dex),
  ]);

  if (code === '0x') {
    const none = 'the address holds no code (not a contract)';
    return {
      block_number: head && Number(head.number),
      has_code: false,
      proxy: null,
      owner: null,
      owner_unavailable: none,
      simulation: null,
      simulation_unavailable: none,
      gaps: [],
      ...noCodeExtras(none),
    };
  }
  const owner = readOwner(ownerAnswer);
  const ownerAddress = 'address' in owner ? owner.address : null;
  // The second round, one batch: a beacon's reads, the extras' second reads (owner kind, the implementation's
  // code: after the beacon's for a beacon proxy) and the restrictions' first round. Nothing waits for the
  // restrictions' last round but the answer: the reads stay within three rounds.
  const [{ proxy, part, ownerKind }, restricted] = await Promise.all([
    readProxy(rpc, code, { implementation, admin, beacon, proxiable }, ownerAddress).then(async (proxy) => ({
      proxy,
      ...(await extras.finish({ code, implementation: proxy === null ? undefined : proxy.implementation, owner: ownerAddress })),
    })),
    first === null || dex.router === undefined
      ? null
      : head === null || dex.restrictions === undefined
        ? noRestrictions({ router: dex.router, wrappedNative: dex.wrappedNative, token }, first, 'the node did not give its latest block, to pin the later simulations to')
        : readRestrictions(rpc, { market: { router: dex.router, wrappedNative: dex.wrappedNative, token }, block: head, first, owner: ownerAddress, code: TOKEN_SIMULATOR_RUNTIME, settings: dex.restrictions }),
  ]);
  return {
    block_number: head && Number(head.number),
    has_code: true,
    proxy,
    owner: ownerAddress === null ? null : { address: ownerAddress, renounced: isRenounced(ownerAddress), ...ownerKind! },
    owner_unavailable: 'unavailable' in owner ? owner.unavailable : null,
    ...simulation,
    simulation: simulation.simulation && restricted ? { ...simulation.simulation, ...restricted.restrictions } : null,
    gaps: restricted?.gaps ?? [],
    ...part,
  };
}

const noCodeExtras = (none: string): ExtrasPart => ({
  liquidity: null,
  liquidity_unavailable: none,
  capabilities: null,
  capabilities_unavailable: none,
  impersonation: null,
  impersonation_unavailable: none,
});

/** What the liquidity read needs of owner(): its address, if any, and whether it is renounced. */
function ownerForLiquidity(answer: RpcAnswer) {
  const owner = readOwner(answer);
  return 'address' in owner ? { address: owner.address, renounced: isRenounced(owner.address) } : { address: null, renounced: false };
}

/** The latest block's number and timestamp (eth_getBlockByNumber); null when the node gave none. */
function readHead(answer: RpcAnswer): LaterBlock | null {
  if (!('result' in answer)) return null;
  const b = answer.result as { number?: unknown; timestamp?: unknown } | null;
  const isHex = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(v);
  return b !== null && isHex(b.number) && isHex(b.timestamp) ? { number: BigInt(b.number), time: BigInt(b.timestamp) } : null;
}

async function readProxy(
  rpc: RpcCall,
  code: string,
  slots: Record<'implementation' | 'admin' | 'beacon' | 'proxiable', string>,
  owner: string | null,
): Promise<ProxyEvidence | null> {
  const clone = MINIMAL_PROXY.exec(code);
  if (clone) return { kind: 'eip1167', implementation: `0x${clone[1]}`, admin: null, admin_source: null, beacon: null, upgradeable: false };
  const set = (v: string) => !ZERO_WORD.test(v);
  const uups = (kind: ProxyKind, implementation: string | null): ProxyEvidence => ({
    kind,
    implementation,
    // Without an admin slot, upgrades are authorised by the implementation's own code; owner() is who the
    // common pattern (OpenZeppelin's UUPSUpgradeable with onlyOwner) lets upgrade, and admin_source says so.
    admin: owner,
    admin_source: owner === null ? null : 'owner',
    beacon: null,
    upgradeable: true,
  });
  if (set(slots.implementation)) {
    const implementation = wordAddress(slots.implementation);
    if (!set(slots.admin)) return uups('eip1967', implementation);
    return { kind: 'eip1967', implementation, admin: wordAddress(slots.admin), admin_source: 'eip1967_admin_slot', beacon: null, upgradeable: true };
  }
  if (set(slots.beacon)) {
    const beacon = wordAddress(slots.beacon);
    if (beacon === null) return { kind: 'eip1967_beacon', implementation: null, admin: null, admin_source: null, beacon: null, upgradeable: true };
    const [implementation, beaconOwner] = await Promise.all([rpc('eth_call', call(beacon, IMPLEMENTATION)), rpc('eth_call', call(beacon, OWNER))]);
    const admin = readOwner(beaconOwner);
    return {
      kind: 'eip1967_beacon',
      implementation: 'error' in implementation ? null : wordAddress(implementation.result),
      admin: 'address' in admin ? admin.address : null,
      admin_source: 'address' in admin ? 'beacon_owner' : null,
      beacon,
      upgradeable: true,
    };
  }
  if (set(slots.proxiable)) return uups('eip1822', wordAddress(slots.proxiable));
  return null;
}

/** The simulation's evidence, and its raw figures (`first`, null when it did not run) for the restriction checks. */
type SimulationPart = { simulation: TradeSimulation | null; simulation_unavailable: string | null; first: SimulationResult | null };

/** The buy-transfer-sell simulation, or why there is none. A node that refuses it does not fail the other reads. */
async function simulate(source: string, rpc: RpcCall, token: string, dex: DexSettings): Promise<SimulationPart> {
  const unavailable = (reason: string): SimulationPart => ({ simulation: null, simulation_unavailable: reason, first: null });
  if (dex.router === undefined) return unavailable(`no V2-style DEX router is configured for this chain (${source}; see DEX_ROUTER_<CHAIN>)`);
  let answer: RpcAnswer;
  try {
    answer = await rpc('eth_call', simulationParams(dex.router, dex.wrappedNative, token));
  } catch (err) {
    // The node answered with an error of its own (e.g. state overrides not supported): the other reads stand.
    if (err instanceof UpstreamError && err.failure === 'provider') return unavailable(`the node refused the simulation: ${err.message}`);
    throw err;
  }
  // An error that is no revert is the node's refusal (the state override not supported, say): named as such.
  if ('error' in answer && answer.error.code !== 3 && !/revert/i.test(answer.error.message)) {
    return unavailable(`the node refused the simulation: ${source} error: JSON-RPC error ${answer.error.code} (${answer.error.message})`);
  }
  if ('error' in answer) {
    const data = typeof answer.error.data === 'string' ? answer.error.data : '';
    return unavailable(`the simulation could not run on ${dex.router.toLowerCase()} (is it a V2 router with wrapped native ${dex.wrappedNative.toLowerCase()}?): ${data ? revertReason(data) : answer.error.message}`);
  }
  if (answer.result === '0x') return unavailable('the node returned nothing for the simulation (it may not apply eth_call state overrides)');
  const r = typeof answer.result === 'string' ? decodeSimulation(answer.result) : null;
  if (r === null) return unavailable('the simulation returned data that could not be read');
  if (/^0x0{40}$/.test(r.pair)) return unavailable(`the token has no pair with the wrapped native coin (${dex.wrappedNative.toLowerCase()}) on the router ${dex.router.toLowerCase()}`);
  if (r.buyIn === 0n) return unavailable(`the pair ${r.pair} holds no wrapped native coin to trade against`);
  const bought = r.failedStep !== 'quote' && r.failedStep !== 'buy';
  const sellTried = bought && r.sellIn > 0n;
  return {
    simulation: {
      router: dex.router.toLowerCase(),
      pair: r.pair,
      buy_amount: r.buyIn.toString(),
      buy_tax_pct: bought ? taxPct(r.buyExpected, r.buyReceived) : null,
      transfer_tax_pct: r.transferOk ? taxPct(r.buyReceived, r.transferReceived) : null,
      sell_tax_pct: r.sellOk ? taxPct(r.sellExpected, r.sellReceived) : null,
      transfer_ok: bought && r.buyReceived > 0n ? r.transferOk : null,
      sell_ok: sellTried ? r.sellOk : null,
      failed_step: r.failedStep,
      revert_reason: r.failedStep === null ? null : revertReason(r.revertData),
    },
    simulation_unavailable: null,
    first: r,
  };
}
