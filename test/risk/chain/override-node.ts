// The local EDR node as a node with block overrides: EDR has neither eth_simulateV1 nor eth_call's block-override
// parameter, so this JSON-RPC front (behind a FakeUpstream on 127.0.0.1) emulates them with EDR's own test
// methods, leaving the check itself to speak only the standard ones. Every call (a batch's one by one) runs in
// turn, so that an emulation's snapshot and revert never interleave with another read.
//   eth_call(call, block, stateOverrides, { number, time }): snapshot, mine up to the block before `number`,
//     set the next block's timestamp to `time`, eth_call at "pending" (EDR runs it in that next block), revert.
//   eth_simulateV1({ blockStateCalls }): snapshot, the first block's state overrides applied with hardhat_setCode
//     and hardhat_setBalance; per block (one call each): mine up to it, its timestamp set, the call's answer read
//     by eth_call at "pending", then the call sent as a transaction (its sender impersonated) so that the next
//     block sees its state (not the last call: nothing sees it); revert. Answers `[{ number, timestamp, calls: [{ status, returnData }] }]`.
// `mode` makes the node one that lacks them: 'error' answers an unknown method (eth_simulateV1) or an
// invalid parameter (eth_call's fourth), 'ignore' drops eth_call's fourth parameter silently.
export interface OverrideNodeMode {
  simulateV1: 'emulate' | 'error';
  callOverride: 'emulate' | 'error' | 'ignore';
}

type Item = { jsonrpc: '2.0'; id: unknown; method: string; params: unknown[] };
type Answer = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };

export function overrideNode(rpcUrl: string, mode: () => OverrideNodeMode) {
  let turn: Promise<unknown> = Promise.resolve();
  const raw = async (method: string, params: unknown[]): Promise<Answer> => {
    const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as Answer;
  };
  const must = async (method: string, params: unknown[]) => {
    const a = await raw(method, params);
    if (a.error) throw new Error(`${method}: ${a.error.message}`);
    return a.result;
  };
  const mineTo = async (number: bigint) => {
    const latest = BigInt((await must('eth_blockNumber', [])) as string);
    if (number > latest) await must('hardhat_mine', [`0x${(number - latest).toString(16)}`]);
  };
  const nextBlock = async (b: { number: string; time: string }) => {
    await mineTo(BigInt(b.number) - 1n);
    await must('evm_setNextBlockTimestamp', [`0x${BigInt(b.time).toString(16)}`]);
  };
  const inSnapshot = async <T>(work: () => Promise<T>): Promise<T> => {
    const snap = await must('evm_snapshot', []);
    try {
      return await work();
    } finally {
      await must('evm_revert', [snap]);
    }
  };

  const callWithBlock = (call: object, overrides: object, block: { number: string; time: string }) =>
    inSnapshot(async () => {
      await nextBlock(block);
      return raw('eth_call', [call, 'pending', overrides]);
    });

  const simulateV1 = (spec: { blockStateCalls: { blockOverrides: { number: string; time: string }; stateOverrides?: Record<string, { code?: string; balance?: string }>; calls: { from: string; to: string; data: string }[] }[] }) =>
    inSnapshot(async () => {
      for (const [address, o] of Object.entries(spec.blockStateCalls[0]?.stateOverrides ?? {})) {
        if (o.code) await must('hardhat_setCode', [address, o.code]);
        if (o.balance) await must('hardhat_setBalance', [address, o.balance]);
      }
      const blocks = [];
      for (const [i, b] of spec.blockStateCalls.entries()) {
        const calls = [];
        for (const [j, call] of b.calls.entries()) {
          await nextBlock(b.blockOverrides);
          const answer = await raw('eth_call', [call, 'pending']);
          calls.push(answer.error ? { status: '0x0', returnData: typeof answer.error.data === 'string' ? answer.error.data : '0x', error: answer.error } : { status: '0x1', returnData: answer.result });
          // The last call's state is seen by no later one: not sent (the snapshot is reverted anyway).
          if (i === spec.blockStateCalls.length - 1 && j === b.calls.length - 1) break;
          await must('hardhat_impersonateAccount', [call.from]);
          await must('hardhat_setBalance', [call.from, '0x56bc75e2d63100000']);
          const hash = (await must('eth_sendTransaction', [{ ...call, gas: '0xffffff' }])) as string;
          await must('eth_getTransactionReceipt', [hash]);
        }
        blocks.push({ number: b.blockOverrides.number, timestamp: b.blockOverrides.time, calls });
      }
      return { result: blocks } as Partial<Answer>;
    });

  const one = async (item: Item): Promise<Answer> => {
    const m = mode();
    const base = { jsonrpc: '2.0' as const, id: item.id };
    if (item.method === 'eth_simulateV1') {
      if (m.simulateV1 === 'error') return { ...base, error: { code: -32601, message: 'the method eth_simulateV1 does not exist/is not available' } };
      return { ...base, ...(await simulateV1(item.params[0] as never)) };
    }
    if (item.method === 'eth_call' && item.params.length >= 4) {
      if (m.callOverride === 'error') return { ...base, error: { code: -32602, message: 'too many arguments, want at most 3' } };
      if (m.callOverride === 'ignore') return { ...(await raw('eth_call', item.params.slice(0, 3))), id: item.id };
      const [call, , overrides, block] = item.params as [object, unknown, object, { number: string; time: string }];
      return { ...(await callWithBlock(call, overrides, block)), id: item.id };
    }
    return { ...(await raw(item.method, item.params)), id: item.id };
  };

  /** A FakeUpstream handler: the body (one call or a batch) answered in turn with every other. */
  return async (body: string): Promise<string> => {
    const parsed = JSON.parse(body) as Item | Item[];
    const run = async () => (Array.isArray(parsed) ? await sequential(parsed.map((i) => () => one(i))) : await one(parsed));
    const done = turn.then(run, run);
    turn = done.catch(() => undefined);
    return JSON.stringify(await done);
  };
}

async function sequential<T>(tasks: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  for (const t of tasks) out.push(await t());
  return out;
}
