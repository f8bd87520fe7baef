// The batch-settlement test contracts against the rules of the scheme's EVM specification that the SDK does
// not exercise on its happy path: who may claim, what a voucher bounds, the timed withdrawal (why the server
// must claim within the withdraw delay), refund nonces, and the collector binding a deposit to its channel.
import { BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS } from '@x402/evm';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { createWalletClient, encodeAbiParameters, http, keccak256, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deployBatchSettlement, deployFixtures, MNEMONIC, startLocalChain, type LocalChain } from './x402/chain.ts';

const payer = mnemonicToAccount(MNEMONIC, { addressIndex: 2 });
const receiver = mnemonicToAccount(MNEMONIC, { addressIndex: 3 });
const authorizer = mnemonicToAccount(MNEMONIC, { addressIndex: 4 });
const stranger = mnemonicToAccount(MNEMONIC, { addressIndex: 5 });

let chain: LocalChain;
let fx: Awaited<ReturnType<typeof deployFixtures>>;
let bs: Awaited<ReturnType<typeof deployBatchSettlement>>;
let config: { payer: Address; payerAuthorizer: Address; receiver: Address; receiverAuthorizer: Address; token: Address; withdrawDelay: number; salt: Hex };
let channelId: Hex;

const domain = () => ({ name: 'x402 Batch Settlement', version: '1', chainId: chain.chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS as Address });
const wallet = (account: typeof payer) => createWalletClient({ account, chain: chain.chain, transport: http(chain.rpcUrl) });
async function send(account: typeof payer, functionName: string, args: readonly unknown[]) {
  const hash = await wallet(account).writeContract({ address: bs.address, abi: bs.abi, functionName, args, gas: 1_000_000n });
  return (await chain.publicClient.waitForTransactionReceipt({ hash })).status;
}
/** The revert reason of a call, as the node reports it, or 'ok'. */
async function reason(account: typeof payer, functionName: string, args: readonly unknown[]): Promise<string> {
  try {
    await chain.publicClient.simulateContract({ account, address: bs.address, abi: bs.abi, functionName, args });
    return 'ok';
  } catch (e) {
    return String((e as { shortMessage?: string }).shortMessage ?? e);
  }
}
const voucher = async (maxClaimableAmount: bigint, signer = payer) =>
  signer.signTypedData({ domain: domain(), types: { Voucher: [{ name: 'channelId', type: 'bytes32' }, { name: 'maxClaimableAmount', type: 'uint128' }] }, primaryType: 'Voucher', message: { channelId, maxClaimableAmount } });
const claimRow = async (max: bigint, total: bigint, signer = payer) => ({ voucher: { channel: config, maxClaimableAmount: max }, signature: await voucher(max, signer), totalClaimed: total });

async function depositArgs(amount: bigint, forChannel: Hex, salt = 1n) {
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const nonce = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [forChannel, salt]));
  const signature = await payer.signTypedData({
    domain: { name: 'Test USDC', version: '2', chainId: chain.chainId, verifyingContract: fx.usdc },
    types: { ReceiveWithAuthorization: ['from:address', 'to:address', 'value:uint256', 'validAfter:uint256', 'validBefore:uint256', 'nonce:bytes32'].map((f) => ({ name: f.split(':')[0]!, type: f.split(':')[1]! })) },
    primaryType: 'ReceiveWithAuthorization',
    message: { from: payer.address, to: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, value: amount, validAfter: 0n, validBefore, nonce },
  });
  const data = encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }], [0n, validBefore, salt, signature]);
  return [config, amount, ERC3009_DEPOSIT_COLLECTOR_ADDRESS, data] as const;
}

beforeAll(async () => {
  chain = await startLocalChain(31337, { allowBlocksWithSameTimestamp: true });
  fx = await deployFixtures(chain);
  bs = await deployBatchSettlement(chain);
  await fx.mint(payer.address, 100_000n);
  config = { payer: payer.address, payerAuthorizer: payer.address, receiver: receiver.address, receiverAuthorizer: authorizer.address, token: fx.usdc, withdrawDelay: 900, salt: `0x${'00'.repeat(32)}` };
  channelId = computeChannelId(config, chain.network);
}, 60_000);
afterAll(() => chain?.close());

describe('batch-settlement test contracts', () => {
  it('the channel id is the SDK’s EIP-712 hash of the config; a deposit authorisation funds only its own channel', async () => {
    expect(await chain.publicClient.readContract({ address: bs.address, abi: bs.abi, functionName: 'getChannelId', args: [config] })).toBe(channelId);
    const otherChannel = computeChannelId({ ...config, salt: `0x${'00'.repeat(31)}01` }, chain.network);
    expect(await reason(stranger, 'deposit', await depositArgs(10_000n, otherChannel))).toMatch(/invalid signature/);
    const collector = await chain.publicClient
      .simulateContract({ account: stranger, address: bs.collector, abi: [{ type: 'function', name: 'collect', stateMutability: 'nonpayable', inputs: ['address', 'address', 'uint256', 'bytes32', 'bytes'].map((type) => ({ type, name: '' })), outputs: [] }], functionName: 'collect', args: [payer.address, fx.usdc, 1n, channelId, '0x'] })
      .catch((e) => String(e.shortMessage));
    expect(collector).toMatch(/only the settlement contract/);
    expect(await send(stranger, 'deposit', await depositArgs(10_000n, channelId))).toBe('success'); // anyone may relay it
    expect(await bs.channel(channelId)).toEqual({ balance: 10_000n, totalClaimed: 0n });
  });

  it('claims: only the receiver side, within the voucher and the balance, with the payer’s signature; cumulative', async () => {
    expect(await reason(stranger, 'claim', [[await claimRow(3000n, 3000n)]])).toMatch(/not the receiver side/);
    expect(await reason(authorizer, 'claim', [[await claimRow(3000n, 3001n)]])).toMatch(/claim exceeds voucher/);
    expect(await reason(authorizer, 'claim', [[await claimRow(20_000n, 20_000n)]])).toMatch(/claim exceeds balance/);
    expect(await reason(authorizer, 'claim', [[await claimRow(3000n, 3000n, stranger)]])).toMatch(/invalid voucher signature/);
    expect(await send(authorizer, 'claim', [[await claimRow(3000n, 2000n)]])).toBe('success'); // may claim less than signed
    expect(await send(receiver, 'claim', [[await claimRow(1000n, 1000n)]])).toBe('success'); // an older voucher: no-op
    expect(await bs.channel(channelId)).toEqual({ balance: 10_000n, totalClaimed: 2000n });
    expect(await bs.receiver(receiver.address, fx.usdc)).toEqual({ totalClaimed: 2000n, totalSettled: 0n });
  });

  it('a timed withdrawal: vouchers claimed during the delay are kept; unclaimed ones are lost once it completes', async () => {
    expect(await reason(stranger, 'initiateWithdraw', [config, 1000n])).toMatch(/not the payer side/);
    expect(await reason(payer, 'initiateWithdraw', [config, 8001n])).toMatch(/amount exceeds unclaimed escrow/);
    expect(await send(payer, 'initiateWithdraw', [config, 8000n])).toBe('success');
    expect(await reason(payer, 'finalizeWithdraw', [config])).toMatch(/withdraw delay not elapsed/);
    // The server claims in time (its schedule runs well inside the 900 s delay) ...
    expect(await send(authorizer, 'claim', [[await claimRow(5000n, 5000n)]])).toBe('success');
    await chain.publicClient.request({ method: 'evm_increaseTime' as any, params: [900] as any });
    const before = await fx.balanceOf(payer.address);
    expect(await send(payer, 'finalizeWithdraw', [config])).toBe('success');
    // ... so the payer gets back only what was unclaimed: 10000 - 5000, not the 8000 it asked for.
    expect((await fx.balanceOf(payer.address)) - before).toBe(5000n);
    expect(await bs.channel(channelId)).toEqual({ balance: 5000n, totalClaimed: 5000n });
    // A voucher signed for more is now worthless: nothing is left to claim it from.
    expect(await reason(authorizer, 'claim', [[await claimRow(7000n, 7000n)]])).toMatch(/claim exceeds balance/);
  });

  it('settle moves everything claimed to the receiver once; refunds need the current nonce, which advances even when nothing moves', async () => {
    expect(await send(stranger, 'settle', [receiver.address, fx.usdc])).toBe('success'); // permissionless
    expect(await fx.balanceOf(receiver.address)).toBe(5000n);
    expect(await send(stranger, 'settle', [receiver.address, fx.usdc])).toBe('success');
    expect(await fx.balanceOf(receiver.address)).toBe(5000n);

    const refundSig = (nonce: bigint, amount: bigint) =>
      authorizer.signTypedData({ domain: domain(), types: { Refund: [{ name: 'channelId', type: 'bytes32' }, { name: 'nonce', type: 'uint256' }, { name: 'amount', type: 'uint128' }] }, primaryType: 'Refund', message: { channelId, nonce, amount } });
    expect(await reason(stranger, 'refundWithSignature', [config, 100n, 1n, await refundSig(1n, 100n)])).toMatch(/stale refund nonce/);
    expect(await reason(stranger, 'refundWithSignature', [config, 100n, 0n, await refundSig(0n, 99n)])).toMatch(/invalid refund authorization/);
    expect(await send(stranger, 'refundWithSignature', [config, 100n, 0n, await refundSig(0n, 100n)])).toBe('success'); // no escrow left: moves nothing
    expect(await chain.publicClient.readContract({ address: bs.address, abi: bs.abi, functionName: 'refundNonce', args: [channelId] })).toBe(1n);
    expect(await reason(stranger, 'refundWithSignature', [config, 100n, 0n, await refundSig(0n, 100n)])).toMatch(/stale refund nonce/);
    expect(await fx.balanceOf(bs.address)).toBe(0n);
  });
});
