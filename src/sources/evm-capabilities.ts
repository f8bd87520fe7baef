// Which owner-only powers a contract's code exposes, read from the function selectors in its bytecode (the
// implementation's, for a proxy): the dispatcher compares the call's first 4 bytes with each function's
// selector pushed by PUSH4 (PUSH1-3 when the optimizer drops its leading zero bytes). A selector in the code
// that is in the table below is a function the contract has; whether only its owner may call it is what the
// owner() read beside it tells (onchain-signals.ts scores a power only while an owner is live).
// Each selector is keccak256(signature)[0:4], computed here from the signature as written in the source named
// (test/sources/evm-evidence-parts.test.ts checks the table against viem's toFunctionSelector).
import { keccak_256 } from '@noble/hashes/sha3';

export type Power = 'mint' | 'blacklist' | 'pause' | 'set_fees' | 'set_limits' | 'set_balance';
export const POWERS: readonly Power[] = ['mint', 'blacklist', 'pause', 'set_fees', 'set_limits', 'set_balance'];

export interface Capability {
  power: Power;
  /** The 4-byte selector found in the code, 0x + 8 hex digits (POWER_SIGNATURES names its function). */
  selector: string;
}

const OZ = 'OpenZeppelin Contracts (ERC20PresetMinterPauser, Pausable; github.com/OpenZeppelin/openzeppelin-contracts)';
const USDT = "Tether's TetherToken (USDT on Ethereum, etherscan.io/address/0xdac17f958d2ee523a2206206994597c13d831ec7#code)";
const USDC = "Circle's FiatTokenV1 (USDC, github.com/circlefin/stablecoin-evm, contracts/v1/FiatTokenV1.sol and Blacklistable.sol)";
const SAFEMOON = 'the SafeMoon template (setTaxFeePercent, setMaxTxPercent; copied by many launch tokens)';
const LAUNCH = 'launch-token templates (setters of fees, limits and blocked addresses named in the functions GoPlus and Honeypot.is describe)';

/** The published table: each power with the signatures that grant it, and where each signature is written. */
export const POWER_SIGNATURES: readonly { power: Power; signature: string; source: string }[] = [
  { power: 'mint', signature: 'mint(address,uint256)', source: `${OZ}; ${USDC}` },
  { power: 'mint', signature: 'mint(uint256)', source: LAUNCH },
  { power: 'mint', signature: 'issue(uint256)', source: USDT },
  { power: 'blacklist', signature: 'addBlackList(address)', source: USDT },
  { power: 'blacklist', signature: 'blacklist(address)', source: USDC },
  { power: 'blacklist', signature: 'setBlacklist(address,bool)', source: LAUNCH },
  { power: 'blacklist', signature: 'addToBlacklist(address)', source: LAUNCH },
  { power: 'blacklist', signature: 'setBots(address[],bool)', source: LAUNCH },
  { power: 'pause', signature: 'pause()', source: `${OZ}; ${USDT}; ${USDC}` },
  { power: 'set_fees', signature: 'setFees(uint256,uint256)', source: LAUNCH },
  { power: 'set_fees', signature: 'setTaxFeePercent(uint256)', source: SAFEMOON },
  { power: 'set_fees', signature: 'setSellFee(uint256)', source: LAUNCH },
  { power: 'set_fees', signature: 'setBuyFee(uint256)', source: LAUNCH },
  { power: 'set_fees', signature: 'setParams(uint256,uint256)', source: `${USDT} (basis points and maximum of its transfer fee)` },
  { power: 'set_limits', signature: 'setMaxTxAmount(uint256)', source: LAUNCH },
  { power: 'set_limits', signature: 'setMaxTxPercent(uint256)', source: SAFEMOON },
  { power: 'set_limits', signature: 'setMaxWalletSize(uint256)', source: LAUNCH },
  { power: 'set_limits', signature: 'setMaxWallet(uint256)', source: LAUNCH },
  { power: 'set_limits', signature: 'updateMaxTxnAmount(uint256)', source: LAUNCH },
  { power: 'set_balance', signature: 'setBalance(address,uint256)', source: LAUNCH },
  { power: 'set_balance', signature: 'destroyBlackFunds(address)', source: `${USDT} (zeroes a blacklisted holder's balance)` },
];

export const selectorOf = (signature: string) => `0x${Buffer.from(keccak_256(signature)).toString('hex').slice(0, 8)}`;

const TABLE = POWER_SIGNATURES.map((p) => ({ ...p, selector: selectorOf(p.signature) }));

/** Every 4-byte value the code pushes (PUSH4, and PUSH1-3 left-padded), skipping the immediates of every push. */
export function pushedSelectors(code: string): Set<string> {
  const bytes = Buffer.from(code.replace(/^0x/, ''), 'hex');
  const found = new Set<string>();
  for (let i = 0; i < bytes.length; i++) {
    const op = bytes[i]!;
    if (op < 0x60 || op > 0x7f) continue;
    const n = op - 0x5f;
    if (n <= 4 && i + n < bytes.length) found.add(`0x${bytes.subarray(i + 1, i + 1 + n).toString('hex').padStart(8, '0')}`);
    i += n;
  }
  return found;
}

/** The powers the code's selectors grant, in the table's order, one entry per selector found. */
export function capabilitiesOf(code: string): Capability[] {
  const pushed = pushedSelectors(code);
  return TABLE.filter((t) => pushed.has(t.selector)).map(({ power, selector }) => ({ power, selector }));
}
