// Paying with x402 `batch-settlement`: one deposit on chain, then a signed voucher per call (no transaction, no
// facilitator call), and the unused deposit back at the end. The client's default ('auto') wherever the server offers
// it and maxSpendUsd leaves room for the deposit it asks; here required (`batch: { rpcUrl }`), with the deposit cut
// to what maxSpendUsd leaves.
//   MARKETGATE_URL=… MARKETGATE_WALLET_KEY=0x… MARKETGATE_RPC_URL=https://mainnet.base.org node --import tsx examples/batch.ts
// In your own project: import { createClient, MarketgateError, parseAssets } from 'marketgate/client';
import { createClient, MarketgateError, parseAssets } from '../src/client/index.ts';

// The wallet key is checked here, so a mistyped one is a sentence naming the variable rather than a stack trace
// (never printing it: it is a private key, or meant to be one).
const walletKey = process.env.MARKETGATE_WALLET_KEY ?? '';
if (!/^0x[0-9a-fA-F]{64}$/.test(walletKey)) {
  const what = walletKey === '' ? 'it is not set' : `what is set is not: ${walletKey.length} characters${walletKey.startsWith('0x') ? '' : ', without 0x'}`;
  console.error(`MARKETGATE_WALLET_KEY must be the paying wallet's private key, 0x and 64 hex digits (${what})`);
  process.exit(1);
}

const client = createClient({
  baseUrl: process.env.MARKETGATE_URL ?? 'http://127.0.0.1:3000',
  wallet: walletKey as `0x${string}`,
  maxSpendUsd: 0.02, // also the largest deposit
  batch: { rpcUrl: process.env.MARKETGATE_RPC_URL }, // the payment network's RPC: channel state is read from chain when needed
  assets: parseAssets(process.env.MARKETGATE_ASSETS ?? ''),
});

try {
  const schemes: string[] = [];
  for (const symbol of ['BTC', 'ETH', 'SOL']) {
    const result = await client.request('/v1/price', { symbol });
    schemes.push(`${result.payment?.scheme}:${result.payment?.settle.transaction ? 'transaction' : 'voucher'}`);
  }
  const refund = await client.refund('/v1/price?symbol=BTC'); // the deposit less what the calls were charged
  console.log(JSON.stringify({ schemes, spending: client.spending(), refunded: refund.amount }));
} catch (err) {
  if (!(err instanceof MarketgateError)) throw err;
  console.error(err.message);
  process.exit(1);
}
