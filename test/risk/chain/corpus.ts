// The benchmark corpus of the token risk check (issue 38): on one local chain (evidence-world.ts, trap-world.ts),
// tokens each built to be one known trap, or one benign control, each with the finding it must produce. The
// check's answer is judged by `finding`: a trap is detected when its own signal shows it; a control must not be
// rated high. `npm run bench:risk` (bench/risk.ts) prints the table; test/risk/risk-corpus.test.ts holds it.
import { parseEther } from 'viem';
import { type EvidenceWorld, timelockedProxy } from './evidence-world.ts';
import { deployTrapTokens } from './trap-world.ts';
import { SUPPLY } from './world.ts';

/** A score at or above this is "rated high" (the floor of an unverified contract's score, signals.ts CLOSED_SOURCE_FLOOR). */
export const HIGH_SCORE = 50;

type Data = {
  score: number | null;
  score_breakdown: { signals: { signal: string; risk: number }[] };
  onchain: Record<string, any> | null;
};

export interface CorpusToken {
  name: string;
  kind: 'trap' | 'control';
  /** How it was built. */
  built: string;
  /** What the check must report (a trap's signal, or "not high" for a control). */
  expected: string;
  token: string;
  /** Whether the answer shows the finding (a trap), or the reported value in words. */
  judge: (d: Data) => { ok: boolean; reported: string };
}

const fired = (name: string) => (d: Data) => {
  const s = d.score_breakdown.signals.find((x) => x.signal === name);
  return { ok: s !== undefined && s.risk > 0, reported: s === undefined ? `${name} not scored` : `${name} risk ${s.risk}` };
};
const sim = (field: string, ok: (v: any, s: any) => boolean, show: (v: any, s: any) => string) => (d: Data) => {
  const s = d.onchain?.simulation;
  const v = s?.[field];
  return { ok: s != null && v !== undefined && ok(v, s), reported: s == null ? 'no simulation' : `${field} ${show(v, s)}` };
};
const notHigh = (d: Data) => ({ ok: d.score !== null && d.score < HIGH_SCORE, reported: `score ${d.score}` });

export async function buildCorpus(w: EvidenceWorld): Promise<CorpusToken[]> {
  const out: CorpusToken[] = [];
  const add = (t: Omit<CorpusToken, 'token'>, token: string) => out.push({ ...t, token });
  const control = (name: string, built: string) => ({ name, kind: 'control' as const, built, expected: `not high (< ${HIGH_SCORE})`, judge: notHigh });
  const trap = (name: string, built: string, expected: string, judge: CorpusToken['judge']) => ({ name, kind: 'trap' as const, built, expected, judge });

  // Controls.
  add(control('plain ERC-20', 'PlainToken, 100 WETH pair, LP kept by the owner'), (await w.listed('PlainToken', ['Plain', 'PLAIN', SUPPLY])).token);
  add(control('burned LP', 'PlainToken, LP sent to 0x…dEaD'), (await w.listed('PlainToken', ['Burned', 'BURN', SUPPLY], { lp: 'burn' })).token);
  add(control('locked LP', 'PlainToken, LP locked in LpLocker (a configured locker)'), (await w.listed('PlainToken', ['Locked', 'LOCK', SUPPLY], { lp: 'lock' })).token);
  add(control('taxed but honest', 'SellTaxToken: 10 % sell tax to the owner, LP burned'), (await w.listed('SellTaxToken', ['Taxed', 'TAX', SUPPLY], { lp: 'burn', setPair: true })).token);
  const renounced = await w.listed('PlainToken', ['Renounced', 'GONE', SUPPLY], { lp: 'burn' });
  await w.write(renounced.token, 'PlainToken', 'renounceOwnership', []);
  add(control('renounced owner', 'PlainToken, ownership renounced, LP burned'), renounced.token);
  const minted = await w.listed('MintToken', ['Mint Renounced', 'MREN', SUPPLY], { lp: 'burn' });
  await w.write(minted.token, 'MintToken', 'renounceOwnership', []);
  add(control('mint() but renounced', 'MintToken, ownership renounced: nobody can mint'), minted.token);
  const safe = await w.listed('OwnedToken', ['Safe Owned', 'SAFE', SUPPLY], { lp: 'burn' });
  await w.write(safe.token, 'OwnedToken', 'transferOwnership', [w.safe]);
  add(control('Safe-owned', 'OwnedToken owned by a 2-of-3 Safe, LP burned'), safe.token);
  add(control('deep pool', 'PlainToken, 1,000 WETH pair, LP locked'), (await w.listed('PlainToken', ['Deep', 'DEEP', SUPPLY], { lp: 'lock', weth: parseEther('1000') })).token);

  // Traps of this side (liquidity, capabilities, impersonation).
  add(trap('LP held by the owner (rug-ready)', 'PlainToken, 100 % of LP kept by the owner', 'chain_lp_pullable', fired('chain_lp_pullable')), (await w.listed('PlainToken', ['Rug', 'RUG', SUPPLY])).token);
  add(trap('thin pool', 'PlainToken, 0.1 WETH pair ($200)', 'chain_thin_liquidity', fired('chain_thin_liquidity')), (await w.listed('PlainToken', ['Thin', 'THIN', SUPPLY], { weth: parseEther('0.1'), lp: 'burn' })).token);
  for (const [contract, power, symbol] of [
    ['MintToken', 'mint', 'MINT'],
    ['BlacklistToken', 'blacklist', 'BLK'],
    ['PauseToken', 'pause', 'PAUSE'],
    ['FeeSetterToken', 'set_fees', 'FEES'],
    ['LimitSetterToken', 'set_limits', 'LIMIT'],
    ['BalanceSetterToken', 'set_balance', 'BAL'],
  ] as const) {
    add(trap(`owner can ${power.replace('_', ' ')}`, `${contract}: its owner-only function, owner live, LP burned`, `chain_power_${power}`, fired(`chain_power_${power}`)), (await w.listed(contract, [contract, symbol, SUPPLY], { lp: 'burn' })).token);
  }
  add(trap('USDC impersonator', 'PlainToken named "USD Coin" / "USDC", LP burned', 'chain_impersonation', fired('chain_impersonation')), (await w.listed('PlainToken', ['USD Coin', 'USDC', SUPPLY], { lp: 'burn' })).token);
  add(trap('WETH impersonator', 'PlainToken named "Wrapped Ether" / "WETH", LP burned', 'chain_impersonation', fired('chain_impersonation')), (await w.listed('PlainToken', ['Wrapped Ether', 'WETH', SUPPLY], { lp: 'burn' })).token);
  add(trap('honeypot (sells revert)', 'HoneypotToken: transfers to the pair revert for all but the owner', 'chain_sell_blocked', fired('chain_sell_blocked')), w.tokens.honeypot);
  add(trap('upgradeable proxy, live EOA admin', 'Eip1967Proxy over UpgradeableToken, admin an EOA', 'chain_proxy_admin_live', fired('chain_proxy_admin_live')), w.tokens.proxied);

  // The proxy control moves the chain's clock two days (its timelock's delay): after every other listing but the traps.
  const proxy = await timelockedProxy(w);
  await w.list(proxy.token, 'UpgradeableToken', { lp: 'burn' });
  add(control('proxy with a timelocked admin', 'Eip1967Proxy over UpgradeableToken, admin and owner a 2-day Timelock, LP burned'), proxy.token);

  // The trading-restriction traps (trap-world.ts, from the i38-risk side), laterTax last of all.
  const traps = await deployTrapTokens(w);
  add(trap('max transaction', 'MaxTxToken: buys and sells over 0.5 % of supply revert', 'simulation.max_tx', sim('max_tx', (v) => v !== null, (v) => JSON.stringify(v))), traps.tokens.maxTx);
  add(trap('max wallet', 'MaxWalletToken: no holding over 1 % of supply', 'simulation.max_wallet', sim('max_wallet', (v) => v !== null, (v) => JSON.stringify(v))), traps.tokens.maxWallet);
  add(trap('sell cooldown', 'CooldownToken: a second sell within 60 s reverts', 'simulation.cooldown', sim('cooldown', (v) => v === true, (v) => String(v))), traps.tokens.cooldown);
  add(trap('trading never opened', 'TradingDisabledToken: every buy reverts until enableTrading()', 'simulation.trading_enabled false', sim('trading_enabled', (v) => v === false, (v) => String(v))), traps.tokens.noTrading);
  add(
    trap('real holders cannot sell', 'HolderBlockToken: only a fresh recipient may sell', 'simulation.holders_sell_ok < holders_tried', sim('holders_sell_ok', (v, s) => v !== null && s.holders_tried !== null && v < s.holders_tried, (v, s) => `${v}/${s.holders_tried}`)),
    traps.tokens.holderBlock,
  );
  add(
    trap('tax raised later', 'LaterTaxToken: untaxed for 30 blocks, then 25 % buy / 90 % sell', 'simulation.tax_later above the taxes now', sim('tax_later', (v, s) => v !== null && (v.sell_tax_pct ?? 0) > (s.sell_tax_pct ?? 0) + 1, (v) => JSON.stringify(v))),
    traps.tokens.laterTax,
  );
  return out;
}
