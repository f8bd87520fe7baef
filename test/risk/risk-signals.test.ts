// How GoPlus's fields are read into the score, each case built from a recorded payload edited the way
// GoPlus documents the field (issue 9). Scores are hand-worked in the comments: score = 100 × Σ(weight ×
// risk) / Σ weight over the scored signals, rounded; floors after that.
import { describe, expect, it } from 'vitest';
import { recorded } from '../fixtures.ts';
import { useFakeUpstreamApp } from '../helpers.ts';

const EVM = '0x4e7e15a6b83718ba79674cc4ce09f7d4a631ec2c';
const RAY = '4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R';

const t = useFakeUpstreamApp((url) => ({ GOPLUS_BASE_URL: url, RISK_RATE_LIMIT: '100000' }));
const { fake, get } = t;

type Token = Record<string, any>;

/** The recorded EVM token (KOKODI: a honeypot), edited by `edit`, answered for chain 1. */
async function evm(edit: (token: Token) => void) {
  const sample = recorded('goplus__token_security_evm.json');
  edit(sample.result[EVM]);
  fake.route('GET /api/v1/token_security/1', { body: sample });
  const res = await get(`/risk/v1/token-risk?chain=ethereum&address=${EVM}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** The recorded Solana token (Raydium), edited by `edit`. */
async function solana(edit: (token: Token) => void = () => {}) {
  const token = recorded('goplus__solana_token_security.json');
  edit(token);
  fake.route('GET /api/v1/solana/token_security', { body: { code: 1, message: 'OK', result: { [RAY]: token } } });
  const res = await get(`/risk/v1/token-risk?chain=solana&address=${RAY}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/**
 * The EVM sample with every risk flag cleared ("1" → "0"), open source, still in a DEX, and no holder
 * list: 80 of the 85 EVM weight is scored (top10_holders_share, weight 5, has no data), all at risk 0.
 */
function clean(token: Token) {
  for (const k of Object.keys(token)) if (token[k] === '1') token[k] = '0';
  token.is_open_source = '1';
  token.is_in_dex = '1';
  token.holders = [];
}

const signal = (data: { score_breakdown: { signals: { signal: string }[] } }, name: string) => data.score_breakdown.signals.find((s) => s.signal === name);

// Raydium as recorded, after this issue: metadata_mutable 1 × 1 + top10 5 × 0.5553 + LP 4 × 0.6339 = 6.3121
// risk points over 67 weight (59 before + default_account_frozen 8, clean) = 9.42 → 9.
const RAYDIUM_POINTS = 1 + 5 * 0.5553 + 4 * 0.6339;

describe('1. Solana Token-2022 transfer fee', () => {
  it('reads current_fee_rate.fee_rate (a ratio), shows the scheduled rate and epoch, and scores the larger', async () => {
    const data = await solana((tk) => {
      tk.transfer_fee = {
        current_fee_rate: { fee_rate: '0.01', maximum_fee: '5000000000' },
        scheduled_fee_rate: [{ epoch: '812', fee_rate: '0.1', maximum_fee: '5000000000' }],
      };
    });
    expect(data.flags.tax).toEqual({
      transfer_fee: 0.1,
      transfer_fee_current: 0.01,
      transfer_fee_scheduled: 0.1,
      transfer_fee_scheduled_epoch: 812,
      transfer_fee_upgradable: false,
    });
    // 0.1 on the 0–25 % ramp → risk 0.4, 4 × 0.4 = 1.6; (6.3121 + 1.6) / 67 = 11.81 → 12 (before: the fee was null, 11).
    expect(signal(data, 'transfer_fee')).toMatchObject({ value: 0.1, weight: 4, risk: 0.4 });
    expect(data.score_breakdown.weight_total).toBe(67);
    expect(data.score).toBe(12);
    expect((100 * (RAYDIUM_POINTS + 1.6)) / 67).toBeCloseTo(11.81, 2);
  });

  it('reads a fee_rate above 1 as basis points (Token-2022 native unit)', async () => {
    const data = await solana((tk) => {
      tk.transfer_fee = { current_fee_rate: { fee_rate: '2000', maximum_fee: '100' }, scheduled_fee_rate: [] };
    });
    // 2000 bps = 0.2 → risk 0.8, 3.2 points; (6.3121 + 3.2) / 67 = 14.2 → 14.
    expect(data.flags.tax).toMatchObject({ transfer_fee: 0.2, transfer_fee_current: 0.2, transfer_fee_scheduled: null, transfer_fee_scheduled_epoch: null });
    expect(data.score).toBe(14);
  });

  it('an empty transfer_fee {} is no fee (0), and a fee_rate that is neither a ratio nor basis points is no data', async () => {
    expect((await solana()).flags.tax).toMatchObject({ transfer_fee: 0, transfer_fee_current: 0, transfer_fee_scheduled: null });
    fake.reset();
    t.app.services.cache.clear();
    const data = await solana((tk) => {
      tk.transfer_fee = { current_fee_rate: { fee_rate: '20000', maximum_fee: '1' } };
    });
    expect(data.flags.tax.transfer_fee).toBeNull();
    expect(signal(data, 'transfer_fee')).toBeUndefined();
  });
});

describe('2. a token that cannot be sold reaches the critical floor', () => {
  it('sell_tax "1" (100 % or cannot sell) with is_honeypot "0" is critical', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.sell_tax = '1';
    });
    // 4 × 1 / 80 = 5 % (it was 5 before too), raised to the floor 80.
    expect(signal(data, 'sell_tax')).toMatchObject({ value: 1, weight: 4, risk: 1, contribution: 5 });
    expect(data.score).toBe(80);
    expect(data.score_breakdown.critical_floor_applied).toBe(true);
  });

  it('a high tax below 1 is not critical: 30 % is risk 1 but the token can be sold', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.sell_tax = '0.3';
    });
    expect(data.score).toBe(5); // 4 / 80
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
  });

  it('cannot_buy "1": the simulated taxes of 1 are its side effect, shown but not scored again', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.cannot_buy = '1';
      tk.buy_tax = '1';
      tk.sell_tax = '1';
    });
    // Only cannot_buy scores: 3 / (80 − 3 buy − 4 sell) = 4.1 → 4 (before: 12, and now it would be critical).
    expect(data.score_breakdown.weight_total).toBe(73);
    expect(data.score).toBe(4);
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
    expect(data.flags.tax).toMatchObject({ buy_tax: 1, sell_tax: 1 });
    expect(signal(data, 'sell_tax')).toBeUndefined();
    expect(data.score_breakdown.not_scored).toEqual([
      { signal: 'buy_tax', value: 1, reason: expect.stringMatching(/cannot_buy is "1".*side effect of the failed simulated buy/) },
      { signal: 'sell_tax', value: 1, reason: expect.stringMatching(/cannot_buy is "1".*side effect of the failed simulated buy/) },
    ]);
  });

  it('trading_cooldown "1": a sell tax of 1 may be the cooldown failing the simulated sell, shown but not scored', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.trading_cooldown = '1';
      tk.sell_tax = '1';
    });
    // trading_cooldown 2 / (80 − 4) = 2.6 → 3 (before: 7).
    expect(data.score).toBe(3);
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
    expect(data.score_breakdown.not_scored).toEqual([{ signal: 'sell_tax', value: 1, reason: expect.stringMatching(/trading_cooldown is "1"/) }]);
  });

  it('cannot_sell_all "1" is a partial-sale limit, not "cannot sell": scored, not critical', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.cannot_sell_all = '1';
    });
    expect(data.score).toBe(6); // 5 / 80 = 6.25
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
  });
});

describe('3. an empty list is missing data, not a safe spread', () => {
  it('holders: [] and lp_holders: [] leave both shares null and out of both sums', async () => {
    const data = await evm((tk) => {
      tk.is_honeypot = '0';
      tk.holders = [];
      tk.lp_holders = [];
    });
    expect(data.flags.holder_concentration.top10_holders_share).toBeNull();
    expect(data.flags.lp_concentration.lp_unlocked_share).toBeNull();
    // same creator 3 + mintable 4 + balance change 6 + hidden owner 4 = 17 points; is_honeypot "0" still scores
    // (weight 10, risk 0) and only the two shares leave: 17 / (85 − 5 − 4) = 22.4 → 22 (before: 17 / 85 → 20).
    expect(data.score_breakdown.weight_total).toBe(76);
    expect(data.score).toBe(22);
  });

  it('is_in_dex "0" (GoPlus then omits LP holders and the simulated trade): LP is null and the answer says why', async () => {
    const data = await evm((tk) => {
      clean(tk);
      tk.is_in_dex = '0';
      tk.dex = [];
      for (const k of ['lp_holders', 'lp_holder_count', 'lp_total_supply', 'buy_tax', 'sell_tax', 'cannot_sell_all']) delete tk[k];
    });
    expect(data.flags.lp_concentration).toEqual({ in_dex: false, lp_holder_count: null, lp_unlocked_share: null });
    expect(data.checks_not_made).toEqual([
      { reason: expect.stringMatching(/not traded on a DEX/), signals: ['cannot_sell_all', 'lp_holder_count', 'lp_unlocked_share', 'buy_tax', 'sell_tax'] },
    ]);
  });

  it('is_in_dex "0" also voids LP rows GoPlus did send', async () => {
    const data = await evm((tk) => {
      tk.is_in_dex = '0';
    });
    expect(data.flags.lp_concentration.lp_unlocked_share).toBeNull();
  });
});

describe('4. Solana default_account_state', () => {
  it('"2" (Frozen): new token accounts start frozen, a signal of its own (weight 8)', async () => {
    const data = await solana((tk) => {
      tk.default_account_state = '2';
    });
    expect(data.flags.honeypot.default_account_frozen).toBe(true);
    // (6.3121 + 8) / 67 = 21.4 → 21 (before: 11, the same as "1").
    expect(signal(data, 'default_account_frozen')).toMatchObject({ value: true, weight: 8, risk: 1 });
    expect(data.score).toBe(21);
  });

  it('"1" (Initialized) is clean and scored 0: the recorded sample now scores 9', async () => {
    const data = await solana();
    expect(data.flags.honeypot.default_account_frozen).toBe(false);
    expect(data.score).toBe(9); // 6.3121 / 67 = 9.42
    expect(data.coverage).toEqual({ present: 18, total: 18, ratio: 1 });
  });
});

describe('5. closed-source EVM contracts', () => {
  /** GoPlus documents no answer for these when is_open_source is "0". */
  const NOT_RETURNED_WHEN_CLOSED = [
    'anti_whale_modifiable', 'can_take_back_ownership', 'external_call', 'hidden_owner', 'is_anti_whale', 'is_blacklisted', 'is_honeypot',
    'is_mintable', 'is_proxy', 'is_whitelisted', 'owner_address', 'owner_balance', 'owner_change_balance', 'owner_percent',
    'personal_slippage_modifiable', 'selfdestruct', 'slippage_modifiable', 'trading_cooldown', 'transfer_pausable',
  ];
  const closedSource = (tk: Token) => {
    tk.is_open_source = '0';
    tk.honeypot_with_same_creator = '0';
    for (const k of NOT_RETURNED_WHEN_CLOSED) delete tk[k];
  };

  it('scores at least 50 and names the checks that could not be made', async () => {
    const data = await evm(closedSource);
    // Scored: cannot_sell_all 5, cannot_buy 3, same creator 3, closed_source 4 × 1, top10 5 × 0.6106, creator 2, LP 4,
    // buy 3, sell 4 = weight 33, 7.053 points; is_honeypot is missing and the chain was not read, so the sellability
    // counts as unknown (weight 10 at 0.5): 12.053 of 43 → 28, raised to 50 by both floors.
    expect(data.score_breakdown.weight_total).toBe(43);
    expect(data.score_breakdown.signals.reduce((a: number, s: { contribution: number }) => a + s.contribution, 0)).toBeCloseTo(16.4, 1);
    expect(data.score_breakdown.unknown.map((u: { signal: string; contribution: number }) => [u.signal, u.contribution])).toEqual([['sellable', 11.63]]);
    expect(data.score).toBe(50);
    expect(data.score_breakdown.closed_source_floor_applied).toBe(true);
    expect(data.score_breakdown.unknown_sell_floor_applied).toBe(true);
    expect(data.score_breakdown.critical_floor_applied).toBe(false);
    // 29 EVM signals − the 16 not returned − trusted (not listed) = 12 given.
    expect(data.coverage).toMatchObject({ present: 12, total: 29 });
    expect(data.checks_not_made).toEqual([
      {
        reason: expect.stringMatching(/source is not verified/),
        signals: [
          'is_honeypot', 'transfer_pausable', 'trading_cooldown', 'mintable', 'owner_can_change_balance', 'hidden_owner', 'can_take_back_ownership',
          'selfdestruct', 'proxy', 'external_call', 'blacklist', 'whitelist', 'anti_whale_modifiable', 'owner_share', 'tax_modifiable', 'personal_tax_modifiable',
        ],
      },
    ]);
  });

  it('a closed-source token on the trust list keeps its weighted score', async () => {
    const data = await evm((tk) => {
      closedSource(tk);
      tk.trust_list = '1';
    });
    // (7.053 + 5 unknown sellability) / (33 + 10 trusted + 10 unknown) = 22.7: a trusted listing lifts both floors.
    expect(data.score).toBe(23);
    expect(data.score_breakdown.closed_source_floor_applied).toBe(false);
    expect(data.score_breakdown.unknown_sell_floor_applied).toBe(false);
  });
});

describe('6. malicious Solana authorities', () => {
  const BAD = 'BadAuthority1111111111111111111111111111111';
  const BAD_CREATOR = 'BadCreator111111111111111111111111111111111';

  it('a known-malicious address holding a live power is a heavy signal (weight 8), with the addresses listed', async () => {
    const data = await solana((tk) => {
      tk.mintable = { status: '1', authority: [{ address: BAD, malicious_address: 1 }] };
      tk.freezable = { status: '0', authority: [{ address: BAD, malicious_address: 1 }] };
      tk.creators = [{ address: BAD_CREATOR, malicious_address: 1 }];
    });
    expect(data.flags.authority).toMatchObject({ mintable: true, freezable: false, malicious_authority: true });
    expect(data.malicious_addresses).toEqual([
      { address: BAD, role: 'mintable', live: true },
      { address: BAD, role: 'freezable', live: false },
      { address: BAD_CREATOR, role: 'creators', live: false },
    ]);
    // (6.3121 + mintable 4 + malicious 8) / (67 + 8) = 24.4 → 24 (before: mintable alone, 10.31 / 59 → 17).
    expect(signal(data, 'malicious_authority')).toMatchObject({ value: true, weight: 8, risk: 1 });
    expect(data.score).toBe(24);
  });

  it('malicious addresses without a live power are listed but not scored', async () => {
    const data = await solana((tk) => {
      tk.freezable = { status: '0', authority: [{ address: BAD, malicious_address: '1' }] };
      tk.transfer_hook = [];
    });
    expect(data.flags.authority.malicious_authority).toBe(false);
    expect(data.malicious_addresses).toEqual([{ address: BAD, role: 'freezable', live: false }]);
    expect(data.score).toBe(9);
  });

  it('a malicious transfer hook program is live while it is set', async () => {
    const data = await solana((tk) => {
      tk.transfer_hook = [{ address: BAD, malicious_address: 1 }];
    });
    expect(data.malicious_addresses).toEqual([{ address: BAD, role: 'transfer_hook', live: true }]);
    expect(data.flags.authority).toMatchObject({ transfer_hook: true, malicious_authority: true });
  });

  it('EVM answers carry no such marks: null, not an empty "none found"', async () => {
    expect((await evm(() => {})).malicious_addresses).toBeNull();
  });
});

describe('7. honeypot_with_same_creator counts and the none_transferable spelling', () => {
  it('"3" is set, and the count is shown', async () => {
    const data = await evm((tk) => {
      tk.is_honeypot = '0';
      tk.honeypot_with_same_creator = '3';
    });
    expect(data.flags.honeypot).toMatchObject({ honeypot_with_same_creator: true, honeypot_with_same_creator_count: 3 });
    // (3 + 4 + 6 + 4 + 5 × 0.6106) / 85 = 23.6 → 24 (before: "3" was not read, 17.05 / 82 → 21).
    expect(data.score).toBe(24);
  });

  it('"0" is clear, with count 0', async () => {
    const data = await evm((tk) => {
      tk.honeypot_with_same_creator = '0';
    });
    expect(data.flags.honeypot).toMatchObject({ honeypot_with_same_creator: false, honeypot_with_same_creator_count: 0 });
  });

  it('none_transferable "1" (GoPlus SDK spelling) is the critical non-transferable signal', async () => {
    const data = await solana((tk) => {
      delete tk.non_transferable;
      tk.none_transferable = '1';
    });
    expect(data.flags.honeypot.non_transferable).toBe(true);
    expect(data.score).toBe(80);
    expect(data.score_breakdown.critical_floor_applied).toBe(true);
  });
});

describe('8. EIP-55 checksums', () => {
  const CHECKSUMMED = '0x4e7E15A6B83718bA79674cc4ce09f7d4a631eC2C';

  it('a mixed-case address with a wrong checksum is a 400 that says so', async () => {
    const res = await get('/risk/v1/token-risk?chain=ethereum&address=0x4E7E15A6B83718ba79674cc4ce09f7d4a631ec2c');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: expect.stringMatching(/^query parameter 'address' has a wrong EIP-55 checksum .*typo/) });
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    ['checksummed', CHECKSUMMED],
    ['all lower case', EVM],
    ['all upper case', `0x${EVM.slice(2).toUpperCase()}`],
    ['0X prefix, upper case', `0X${EVM.slice(2).toUpperCase()}`],
  ])('%s is accepted and answered lower-case', async (_name, address) => {
    fake.route('GET /api/v1/token_security/1', { body: recorded('goplus__token_security_evm.json') });
    const res = await get(`/risk/v1/token-risk?chain=1&address=${address}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.address).toBe(EVM);
  });
});
