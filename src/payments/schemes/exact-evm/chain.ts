// What the chain says about one EIP-3009 authorization, read over the payment network's JSON-RPC
// (X402_RPC_URL): the token's `authorizationState(authorizer, nonce)` at the latest block, and, when it is used,
// the transaction that used it (its AuthorizationUsed event, with the Transfer beside it). This is how an outcome
// the facilitator did not tell (a timeout, a dropped connection, a crash, a restart) is found out, never guessed:
//
//   used, with a Transfer of the amount from the payer to pay_to  → landed (its transaction, when found)
//   used, the transaction found but no such Transfer, or canceled → used_elsewhere (this payment was not paid)
//   unused, and the latest block is at or past validBefore        → not_landed: it can never land
//   unused, validBefore still ahead                               → pending: it may still land
//
// viem is loaded the first time the chain is asked (x402 alone loads no viem at start-up).
import type { Abi, PublicClient } from 'viem';
import { loadViem } from '../../../sources/viem.ts';
import { CLOCK_SKEW_S } from '../../core/authorization.ts';
import { watchUntilFinal, type AuthorizationRef, type ChainVerdict, type OutcomeReader } from '../../core/outcome.ts';

const EIP3009_ABI = [
  { type: 'function', name: 'authorizationState', stateMutability: 'view', inputs: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }], outputs: [{ type: 'bool' }] },
  { type: 'event', name: 'AuthorizationUsed', inputs: [{ name: 'authorizer', type: 'address', indexed: true }, { name: 'nonce', type: 'bytes32', indexed: true }] },
  { type: 'event', name: 'AuthorizationCanceled', inputs: [{ name: 'authorizer', type: 'address', indexed: true }, { name: 'nonce', type: 'bytes32', indexed: true }] },
  { type: 'event', name: 'Transfer', inputs: [{ name: 'from', type: 'address', indexed: true }, { name: 'to', type: 'address', indexed: true }, { name: 'value', type: 'uint256', indexed: false }] },
] as const satisfies Abi;

/** Blocks per eth_getLogs call (public RPCs commonly cap a range at 10,000) and calls per search. */
const LOG_CHUNK = 10_000n;
const MAX_LOG_CHUNKS = 20;

export interface AuthorizationChainOptions {
  rpcUrl: string;
  /** CAIP-2 network the RPC must serve (its chain id is checked once). */
  network: `eip155:${number}`;
  /** Bound of each RPC call (ms). */
  timeoutMs: number;
  /** How often `watch` asks again (ms). */
  pollMs?: number;
}

/** A hex value of the ref (an EVM payment's are: its authorization was read by eip3009Of). */
const hex = (v: string) => v as `0x${string}`;
const iso = (unixS: number | bigint) => new Date(Number(unixS) * 1000).toISOString();
const message = (err: unknown) => String((err as { shortMessage?: string; message?: string })?.shortMessage ?? (err as Error)?.message ?? err).split('\n')[0]!;

export class AuthorizationChain implements OutcomeReader {
  private client: Promise<PublicClient> | undefined;
  private chainChecked = false;

  constructor(private readonly options: AuthorizationChainOptions) {}

  /** Asks the chain once. Never throws: a node that cannot be asked is an `unreachable` verdict. */
  async check(a: AuthorizationRef): Promise<ChainVerdict> {
    try {
      const c = await this.connect();
      const head = await c.getBlock({ blockTag: 'latest' });
      const used = await c.readContract({ address: hex(a.asset), abi: EIP3009_ABI, functionName: 'authorizationState', args: [hex(a.payer), hex(a.nonce)], blockNumber: head.number });
      const said = `authorizationState(${a.payer}, ${a.nonce}) = ${used} at block ${head.number} (${iso(head.timestamp)})`;
      if (!used) {
        return Number(head.timestamp) >= a.validBefore
          ? { kind: 'not_landed', state: `${said}, at or after validBefore ${iso(a.validBefore)}: it can never be used` }
          : { kind: 'pending', state: `${said}, before validBefore ${iso(a.validBefore)}: it may still be used` };
      }
      return await this.transferOf(c, a, head.number, said);
    } catch (err) {
      return { kind: 'unreachable', state: `the chain could not be asked (X402_RPC_URL): ${message(err)}` };
    }
  }

  /** Asks until the verdict is final or `untilMs` (epoch ms) passes; the last verdict either way. */
  watch(a: AuthorizationRef, untilMs: number, signal?: AbortSignal): Promise<ChainVerdict> {
    return watchUntilFinal(() => this.check(a), untilMs, this.options.pollMs ?? 500, signal);
  }

  private connect(): Promise<PublicClient> {
    this.client ??= loadViem().then(({ createPublicClient, http }) => createPublicClient({ cacheTime: 0, transport: http(this.options.rpcUrl, { timeout: this.options.timeoutMs, retryCount: 1 }) }) as PublicClient);
    return this.client.then(async (c) => {
      if (!this.chainChecked) {
        const id = await c.getChainId();
        const expected = Number(this.options.network.split(':')[1]);
        if (id !== expected) throw new Error(`the node serves chain id ${id}, not ${expected} (${this.options.network})`);
        this.chainChecked = true;
      }
      return c;
    });
  }

  /** The used authorization's transaction: its AuthorizationUsed log, then the Transfer in the same transaction. */
  private async transferOf(c: PublicClient, a: AuthorizationRef, head: bigint, said: string): Promise<ChainVerdict> {
    const viem = await loadViem();
    const from = await this.searchStart(c, a, head);
    // Both events are indexed by authorizer and nonce: one topic filter finds either, however far back.
    const topics = [
      [viem.toEventSelector(EIP3009_ABI[1]), viem.toEventSelector(EIP3009_ABI[2])],
      viem.pad(a.payer.toLowerCase() as `0x${string}`),
      hex(a.nonce),
    ];
    let logs: { transactionHash: `0x${string}` | null; topics: readonly `0x${string}`[] }[] = [];
    try {
      for (let to = head, n = 0; to >= from && n < MAX_LOG_CHUNKS && logs.length === 0; to -= LOG_CHUNK, n++) {
        const start = to - LOG_CHUNK + 1n > from ? to - LOG_CHUNK + 1n : from;
        logs = (await c.request({ method: 'eth_getLogs', params: [{ address: hex(a.asset), topics, fromBlock: viem.toHex(start), toBlock: viem.toHex(to) }] } as never)) as typeof logs;
      }
    } catch (err) {
      return { kind: 'landed', txHash: null, state: `${said}; its transaction could not be looked up: ${message(err)}` };
    }
    const log = logs[0];
    if (!log?.transactionHash) return { kind: 'landed', txHash: null, state: `${said}; no AuthorizationUsed event for it in blocks ${from}-${head}: transaction unknown` };
    if (log.topics[0] === viem.toEventSelector(EIP3009_ABI[2])) return { kind: 'used_elsewhere', state: `${said}: canceled by the payer in ${log.transactionHash}` };
    const receipt = await c.getTransactionReceipt({ hash: log.transactionHash });
    const paid = receipt.logs.some((l) => {
      if (l.address.toLowerCase() !== a.asset.toLowerCase()) return false;
      try {
        const e = viem.decodeEventLog({ abi: EIP3009_ABI, data: l.data, topics: l.topics });
        return e.eventName === 'Transfer' && e.args.from.toLowerCase() === a.payer.toLowerCase() && e.args.to.toLowerCase() === a.payTo.toLowerCase() && e.args.value === BigInt(a.amount);
      } catch {
        return false;
      }
    });
    if (!paid) return { kind: 'used_elsewhere', state: `${said}: used in ${log.transactionHash}, which transferred no ${a.amount} units from ${a.payer} to ${a.payTo}` };
    return { kind: 'landed', txHash: log.transactionHash, state: `${said}: transferred ${a.amount} units to ${a.payTo} in ${log.transactionHash} (block ${receipt.blockNumber})` };
  }

  /** The first block the transfer can be in: estimated from the chain's recent block time, back to when the payment was verified. */
  private async searchStart(c: PublicClient, a: AuthorizationRef, head: bigint): Promise<bigint> {
    const span = 1000n;
    if (head <= span) return 0n;
    const [latest, earlier] = await Promise.all([c.getBlock({ blockNumber: head }), c.getBlock({ blockNumber: head - span })]);
    const blockTimeS = Number(latest.timestamp - earlier.timestamp) / Number(span);
    const secondsBack = Math.max(0, Date.now() / 1000 - (a.since / 1000 - CLOCK_SKEW_S));
    if (blockTimeS <= 0) return 0n;
    const back = BigInt(Math.ceil((secondsBack / blockTimeS) * 1.5) + 10);
    return head > back ? head - back : 0n;
  }
}
