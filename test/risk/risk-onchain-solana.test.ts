// GET /risk/v1/token-risk on Solana with the mint's account read from the chain: a fake Solana RPC serves
// recorded getAccountInfo (jsonParsed) payloads, each with its source (test/fixtures/upstream/solana-rpc__*,
// served by test/fakes/solana-rpc.ts); GoPlus serves its recorded Solana sample (Raydium) under the mint asked.
import { describe, expect, it } from 'vitest';
import { keepBigIntegers } from '../../src/sources/solana-rpc.ts';
import { recordedSolanaRpc, SOLANA_MINTS } from '../fakes/solana-rpc.ts';
import { recorded } from '../fixtures.ts';
import { useFakeUpstreamApps } from '../helpers.ts';

const t = useFakeUpstreamApps(['goplus', 'solana'] as const, (urls) => ({ GOPLUS_BASE_URL: urls.goplus, RPC_URL_SOLANA: urls.solana, RISK_RATE_LIMIT: '100000' }));
const { goplus, solana } = t.fakes;

/** GoPlus's recorded Raydium object under `mint`, with `overrides`. */
const serveGoplus = (overrides: Record<string, unknown> = {}) =>
  goplus.route('GET /api/v1/solana/token_security', (req) => ({
    body: { code: 1, message: 'OK', result: { [String(req.query.get('contract_addresses'))]: { ...recorded('goplus__solana_token_security.json'), ...overrides } } },
  }));
const ask = async (mint: string) => {
  solana.route('POST /', recordedSolanaRpc);
  const res = await t.get(`/risk/v1/token-risk?chain=solana&address=${mint}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};
const off = { present: [], transfer_fee_bps: 0, transfer_fee_max: null, transfer_fee_epoch: null, transfer_fee_older_bps: null, transfer_fee_authority: null, permanent_delegate: null, transfer_hook: null, non_transferable: false, default_state_frozen: false, pausable: false };
const chainSignals = (data: { score_breakdown: { signals: { source: string; signal: string; value: unknown; risk: number; weight: number }[] } }) =>
  data.score_breakdown.signals.filter((s) => s.source === 'chain').map((s) => [s.signal, s.value, s.weight, s.risk]);

describe("a Solana mint's account, read from the chain", () => {
  it('an SPL Token mint with a live mint authority: its own signal, and a disagreement with GoPlus\'s mintable "0"', async () => {
    serveGoplus();
    const { data, meta } = await ask(SOLANA_MINTS.splMint);
    expect(solana.requests[0]!.body).toBe(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [SOLANA_MINTS.splMint, { encoding: 'jsonParsed', commitment: 'confirmed' }] }),
    );
    expect(data.onchain).toEqual({
      // The slot of the recorded answer's context.
      block_number: 335501751,
      mint_authority: 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr',
      freeze_authority: null,
      supply: '1690580887590527729',
      decimals: 6,
      token_program: 'spl-token',
      extensions: off,
      // The constructed getTokenLargestAccounts answer: the 10 largest of 12 accounts hold 54 % of supply.
      top10_pct: 54,
      // Its constructed Metaplex metadata: is_mutable with a live update authority.
      metadata_mutable: true,
    });
    expect(data.onchain_unavailable).toBeNull();
    // GoPlus gave a top-10 share and metadata_mutable: the chain's stand-ins for them are not scored again.
    expect(chainSignals(data)).toEqual([
      ['chain_mint_authority_live', true, 4, 1],
      ['chain_freeze_authority_live', false, 4, 0],
      ['chain_pausable', false, 4, 0],
    ]);
    // Raydium's recorded GoPlus object says mintable "0" and freezable "0".
    expect(data.disagreements).toEqual([{ signal: 'mintable', provider: false, chain: true }]);
    // (1 metadata + 5 × 0.5553 + 4 × 0.6339 + 4 mint authority) / (67 + 12) = 10.31 / 79 = 13.05 % → 13
    expect(data.score_breakdown.weight_total).toBe(79);
    expect(data.score).toBe(13);
    expect(meta.sources.map((s: { provider: string; error?: string }) => [s.provider, s.error])).toEqual([
      ['goplus', undefined],
      ['rpc:solana', undefined],
    ]);
  });

  it('a Token-2022 mint with a transfer fee: basis points, maximum (a u64 above 2^53, exact), epochs and authority; both authorities live', async () => {
    serveGoplus();
    const { data } = await ask(SOLANA_MINTS.token2022);
    expect(data.onchain).toEqual({
      // The slot of the recorded answer's context.
      block_number: 335501751,
      mint_authority: '7MyTjmRygJoCuDBUtAuSugiYZFULD2SWaoUTmtjtRDzD',
      freeze_authority: '7MyTjmRygJoCuDBUtAuSugiYZFULD2SWaoUTmtjtRDzD',
      supply: '99998926239436',
      decimals: 5,
      token_program: 'spl-token-2022',
      extensions: {
        ...off,
        present: ['transferFeeConfig'],
        transfer_fee_bps: 690,
        transfer_fee_max: '3906250000000000000',
        transfer_fee_epoch: 457,
        transfer_fee_older_bps: 0,
        transfer_fee_authority: '7MyTjmRygJoCuDBUtAuSugiYZFULD2SWaoUTmtjtRDzD',
      },
      // The node has no getTokenLargestAccounts answer for this mint (its error): null, the rest stands.
      top10_pct: null,
      // Its constructed Metaplex metadata has is_mutable false.
      metadata_mutable: false,
    });
    expect(chainSignals(data)).toEqual([
      ['chain_mint_authority_live', true, 4, 1],
      ['chain_freeze_authority_live', true, 4, 1],
      ['chain_pausable', false, 4, 0],
    ]);
    // GoPlus (Raydium's object) says no transfer fee, not mintable, not freezable: the chain says 6.9 % and both live.
    expect(data.disagreements).toEqual([
      { signal: 'mintable', provider: false, chain: true },
      { signal: 'freezable', provider: false, chain: true },
      { signal: 'transfer_fee', provider: 0, chain: 0.069 },
    ]);
  });

  it('GoPlus and the chain agreeing: no disagreement', async () => {
    serveGoplus({ mintable: { status: '1', authority: [] }, freezable: { status: '1', authority: [] }, transfer_fee: { current_fee_rate: { fee_rate: '0.069', maximum_fee: '3906250000000000000' }, scheduled_fee_rate: [] } });
    const { data } = await ask(SOLANA_MINTS.token2022);
    expect(data.disagreements).toEqual([]);
  });

  it('no account at the address, or an account that is not a mint: onchain null with what it is; the RPC answered (no error)', async () => {
    serveGoplus();
    for (const [mint, reason] of [
      [SOLANA_MINTS.none, 'the chain has no account at this address'],
      [SOLANA_MINTS.tokenAccount, "the address is not a token mint (it is a spl-token 'account' account)"],
    ] as const) {
      const { data, meta } = await ask(mint);
      expect(data.onchain).toBeNull();
      expect(data.onchain_unavailable).toBe(reason);
      expect(meta.sources[1]).toEqual(expect.objectContaining({ provider: 'rpc:solana', cached: false }));
      expect(meta.sources[1].error).toBeUndefined();
      expect(chainSignals(data)).toEqual([]);
    }
  });

  it("the RPC's own error (JSON-RPC error in a 200): a 200 with the provider's part, onchain null naming it", async () => {
    serveGoplus();
    solana.route('POST /', { body: { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid param: WrongSize' } } });
    const res = await t.get(`/risk/v1/token-risk?chain=solana&address=${SOLANA_MINTS.splMint}`);
    expect(res.statusCode).toBe(200);
    const { data, meta } = res.json();
    expect(data.onchain).toBeNull();
    expect(data.onchain_unavailable).toBe('rpc:solana error: JSON-RPC error -32602 (Invalid param: WrongSize)');
    expect(meta.sources[1].error).toBe(data.onchain_unavailable);
    expect(data.score).toBe(9); // the provider's part alone, as test/risk/risk.test.ts scores it
  });

  it('a cached answer makes no new RPC call', async () => {
    serveGoplus();
    await ask(SOLANA_MINTS.token2022);
    const again = await ask(SOLANA_MINTS.token2022);
    // getAccountInfo, getTokenLargestAccounts and the metadata account: once.
    expect(solana.requests).toHaveLength(3);
    expect(again.meta.sources[1]).toMatchObject({ provider: 'rpc:solana', cached: true });
  });
});

describe('holders, metadata and pausable', () => {
  it("a Token-2022 pausable mint: extensions.pausable, scored as its own signal; without GoPlus data the chain's top-10 share and mutable metadata stand in", async () => {
    goplus.route('GET /api/v1/solana/token_security', { body: recorded('goplus__empty_result.json') });
    const pausable = (await ask(SOLANA_MINTS.pausable)).data;
    expect(pausable.onchain.extensions).toMatchObject({ present: ['pausableConfig'], pausable: true });
    expect(chainSignals(pausable)).toContainEqual(['chain_pausable', true, 4, 1]);
    const spl = (await ask(SOLANA_MINTS.splMint)).data;
    // 54 % on the ramp from 20 % (0) to 80 % (1): 0.5667.
    expect(chainSignals(spl)).toEqual([
      ['chain_mint_authority_live', true, 4, 1],
      ['chain_freeze_authority_live', false, 4, 0],
      ['chain_top10_share', 0.54, 5, 0.5667],
      ['chain_metadata_mutable', true, 1, 1],
      ['chain_pausable', false, 4, 0],
    ]);
  });

  it("the Metaplex metadata account is found at the PDA the program derives (USDC's known metadata address)", async () => {
    const { metadataAddress } = await import('../../src/sources/solana-mint-extras.ts');
    expect(metadataAddress('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v')).toBe('5x38Kp4hvdomTCnCrAny4UtMUt5rQBdB6px2K1Ui45Wq');
  });
});

describe('u64 numbers in the node\'s JSON', () => {
  it('keeps integers of 16 digits or more as digits (JSON.parse would round them), leaves the rest alone', () => {
    const text = '{"a":18446744073709551615,"b":[123, 9007199254740993],"c":"x:12345678901234567,","d":1.5,"e":0.12345678901234567,"f":"\\"1234567890123456"}';
    expect(JSON.parse(keepBigIntegers(text))).toEqual({ a: '18446744073709551615', b: [123, '9007199254740993'], c: 'x:12345678901234567,', d: 1.5, e: 0.12345678901234567, f: '"1234567890123456' });
  });
});
