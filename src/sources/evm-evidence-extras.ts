// The token evidence beyond code, proxy, owner and the trade simulation: the pool's liquidity
// (evm-liquidity.ts), the owner-only powers in the code (evm-capabilities.ts), what kind of account the owner
// is (evm-owner-kind.ts), and whether the token impersonates a canonical one (evm-canonical-tokens.ts).
// `startEvidenceExtras` sends its first round (name, symbol, the liquidity's first reads) with the token
// evidence's first round; `finish` adds what needs that round's answers (the owner, the code, the proxy).
import { callData, SELECTORS, stringAt, type RpcCall } from './evm-abi.ts';
import { capabilitiesOf, type Capability } from './evm-capabilities.ts';
import { impersonationOf, type CanonicalToken, type Impersonation } from './evm-canonical-tokens.ts';
import { readLiquidity, type LiquidityPart, type LiquiditySettings, type OwnerForLiquidity } from './evm-liquidity.ts';
import { readOwnerKind, type OwnerKindEvidence } from './evm-owner-kind.ts';

export interface EvidenceExtrasSettings {
  /** Stablecoin and LP lockers of the liquidity read (the router and wrapped native coin are the simulation's). */
  stable: string | undefined;
  lockers: readonly string[];
  /** The chain's canonical tokens, its native wrapper included. */
  canonical: readonly CanonicalToken[];
}

export interface ExtrasPart extends LiquidityPart {
  capabilities: Capability[] | null;
  capabilities_unavailable: string | null;
  impersonation: Impersonation | null;
  impersonation_unavailable: string | null;
}

/** What the token evidence's first round tells the extras. */
export interface FirstRound {
  code: string;
  /** The code that runs: the implementation of a proxy, whose address is given (null when unknown); undefined for no proxy. */
  implementation: string | null | undefined;
  owner: string | null;
}

export interface StartedExtras {
  finish(first: FirstRound): Promise<{ part: ExtrasPart; ownerKind: OwnerKindEvidence | null }>;
}

/** Marks a promise handled (its failure is seen where it is awaited, if it is): the first round may fail first. */
const started = <T>(p: Promise<T>) => {
  p.catch(() => {});
  return p;
};

export function startEvidenceExtras(
  rpc: RpcCall,
  token: string,
  dex: { router: string | undefined; wrappedNative: string },
  settings: EvidenceExtrasSettings,
  owner: Promise<OwnerForLiquidity>,
): StartedExtras {
  const names = started(Promise.all([callData(rpc, token, SELECTORS.name), callData(rpc, token, SELECTORS.symbol)]));
  const liquiditySettings: LiquiditySettings = { ...dex, stable: settings.stable, lockers: settings.lockers };
  const liquidity = started(readLiquidity(rpc, token, liquiditySettings, started(owner)));
  return {
    async finish({ code, implementation, owner: ownerAddress }) {
      const [[nameData, symbolData], liquidityPart, ownerKind, implementationCode] = await Promise.all([
        names,
        liquidity,
        ownerAddress === null ? null : readOwnerKind(rpc, ownerAddress),
        typeof implementation === 'string' ? rpc('eth_getCode', [implementation, 'latest']) : null,
      ]);
      const name = stringAt(nameData);
      const symbol = stringAt(symbolData);
      return {
        part: {
          ...liquidityPart,
          ...capabilities(code, implementation, implementationCode),
          impersonation: impersonationOf(token, name, symbol, settings.canonical),
          impersonation_unavailable: name === null && symbol === null ? 'the contract answered neither name() nor symbol()' : null,
        },
        ownerKind,
      };
    },
  };
}

function capabilities(code: string, implementation: string | null | undefined, answer: Awaited<ReturnType<RpcCall>> | null): Pick<ExtrasPart, 'capabilities' | 'capabilities_unavailable'> {
  if (implementation === undefined) return { capabilities: capabilitiesOf(code), capabilities_unavailable: null };
  if (implementation === null) return { capabilities: null, capabilities_unavailable: "the proxy's implementation could not be read" };
  if (answer === null || 'error' in answer || typeof answer.result !== 'string' || answer.result === '0x') {
    return { capabilities: null, capabilities_unavailable: `the implementation ${implementation} holds no code that could be read` };
  }
  return { capabilities: capabilitiesOf(answer.result), capabilities_unavailable: null };
}
