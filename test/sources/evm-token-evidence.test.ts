// The EVM evidence reader's proxy and owner rules, against scripted node answers (the local-chain tests,
// test/risk/risk-onchain.test.ts, cover a transparent EIP-1967 proxy, an EIP-1167 clone and plain tokens on a real
// node): a UUPS proxy (implementation slot, no admin slot), an EIP-1967 beacon, an EIP-1822 proxy, and
// owner() answers that are not an address.
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/lib/errors.ts';
import { readEvmTokenEvidence, SLOTS, type RpcAnswer } from '../../src/sources/evm-token-evidence.ts';

const TOKEN = '0x00000000000000000000000000000000000000aa';
const IMPL = '0x00000000000000000000000000000000000000bb';
const BEACON = '0x00000000000000000000000000000000000000cc';
const OWNER = '0x00000000000000000000000000000000000000dd';
const word = (address: string) => `0x${address.slice(2).padStart(64, '0')}`;
const ZERO = word('0x');

/** A node whose storage slots, owner() answers (by contract) and implementation() answers are scripted. */
function node(slots: Partial<Record<keyof typeof SLOTS, string>>, owners: Record<string, RpcAnswer>, implementations: Record<string, RpcAnswer> = {}) {
  const calls: string[] = [];
  const rpc = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    calls.push(method);
    if (method === 'eth_getBlockByNumber') return { result: { number: '0x45', timestamp: '0x6553f100' } };
    if (method === 'eth_getCode') return { result: params[0] === TOKEN || params[0] === IMPL ? '0x6080' : '0x' };
    if (method === 'eth_getStorageAt') {
      const name = (Object.keys(SLOTS) as (keyof typeof SLOTS)[]).find((k) => SLOTS[k] === params[1])!;
      return { result: slots[name] ?? ZERO };
    }
    if (method !== 'eth_call') return { result: null };
    const [{ to, data }] = params as [{ to: string; data: string }];
    calls.push(`${to} ${data.slice(0, 10)}`);
    if (data === '0x8da5cb5b') return owners[to] ?? { error: { code: 3, message: 'execution reverted' } };
    if (data === '0x5c60da1b') return implementations[to] ?? { error: { code: 3, message: 'execution reverted' } };
    // Every other call (name(), symbol(), the owner-kind and liquidity reads) reverts: nothing more to read.
    return { error: { code: 3, message: 'execution reverted' } };
  };
  return { rpc, calls };
}
const read = (n: ReturnType<typeof node>) => readEvmTokenEvidence('rpc:test', n.rpc, TOKEN, { router: undefined, wrappedNative: '0x4200000000000000000000000000000000000006' });

describe('proxies the local chain does not deploy', () => {
  it('UUPS (EIP-1967 implementation slot, no admin slot): the admin is owner(), and says so', async () => {
    const e = await read(node({ implementation: word(IMPL) }, { [TOKEN]: { result: word(OWNER) } }));
    expect(e.proxy).toEqual({ kind: 'eip1967', implementation: IMPL, admin: OWNER, admin_source: 'owner', beacon: null, upgradeable: true });
    // The latest block, read in the first round: what the later rounds are pinned to.
    expect(e.block_number).toBe(0x45);
  });

  it('UUPS without owner(): who can upgrade is unknown (admin null)', async () => {
    const e = await read(node({ implementation: word(IMPL) }, {}));
    expect(e.proxy).toMatchObject({ kind: 'eip1967', admin: null, admin_source: null, upgradeable: true });
    expect(e.owner).toBeNull();
    expect(e.owner_unavailable).toBe('the contract has no owner() function (the call reverted)');
  });

  it("an EIP-1967 beacon proxy: the implementation is the beacon's implementation(), the admin its owner()", async () => {
    const n = node({ beacon: word(BEACON) }, { [BEACON]: { result: word(OWNER) } }, { [BEACON]: { result: word(IMPL) } });
    const e = await read(n);
    expect(e.proxy).toEqual({ kind: 'eip1967_beacon', implementation: IMPL, admin: OWNER, admin_source: 'beacon_owner', beacon: BEACON, upgradeable: true });
    // The beacon is read in a second round, after the slots.
    expect(n.calls.indexOf(`${BEACON} 0x5c60da1b`)).toBeGreaterThan(n.calls.lastIndexOf('eth_getStorageAt'));
  });

  it('an EIP-1822 proxy (the PROXIABLE slot holds the implementation)', async () => {
    const e = await read(node({ proxiable: word(IMPL) }, { [TOKEN]: { result: word(OWNER) } }));
    expect(e.proxy).toEqual({ kind: 'eip1822', implementation: IMPL, admin: OWNER, admin_source: 'owner', beacon: null, upgradeable: true });
  });

  it('a renounced owner is no live admin: the zero and the dead address count as renounced', async () => {
    for (const dead of ['0x0000000000000000000000000000000000000000', '0x000000000000000000000000000000000000dead']) {
      const e = await read(node({}, { [TOKEN]: { result: word(dead) } }));
      // No code at a burn address: kind eoa (renounced says what it is).
      expect(e.owner).toEqual({ address: dead, renounced: true, kind: 'eoa', threshold: null, owners: null, min_delay_s: null });
    }
  });
});

describe('owner() answers that are not an address', () => {
  it.each([
    ['empty (no such function, no fallback revert)', { result: '0x' }, 'the contract has no owner() function (empty answer)'],
    ['a word with high bits set', { result: `0x${'f'.repeat(64)}` }, 'owner() did not return an address'],
  ] as const)('%s', async (_name, answer, reason) => {
    const e = await read(node({}, { [TOKEN]: answer }));
    expect(e.owner).toBeNull();
    expect(e.owner_unavailable).toBe(reason);
  });
});

describe('reads that fail', () => {
  it('a node error on a storage read fails the whole evidence (the risk route then shows onchain null with it)', async () => {
    const rpc = async (method: string): Promise<RpcAnswer> => (method === 'eth_getStorageAt' ? { error: { code: -32000, message: 'missing trie node' } } : { result: '0x' });
    await expect(readEvmTokenEvidence('rpc:test', rpc, TOKEN, { router: undefined, wrappedNative: TOKEN })).rejects.toEqual(
      new UpstreamError('rpc:test', 'provider', 'rpc:test error: eth_getStorageAt answered missing trie node'),
    );
  });
});
