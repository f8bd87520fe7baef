// Paying per call with x402 `exact`: one USDC transfer per paid call, signed by your wallet, capped by maxSpendUsd.
// Every payment carries a payment identifier; a call whose answer is lost is retried with the same payment.
//   MARKETGATE_URL=… MARKETGATE_WALLET_KEY=0x… node --import tsx examples/exact.ts
// (MARKETGATE_ASSETS=network:address:decimals adds a test network's token; USDC is known on its networks.)
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
  maxSpendUsd: 0.01, // ten calls at $0.001; the eleventh fails before anything is signed
  batch: false, // exact only (the default, 'auto', pays batch-settlement where offered and maxSpendUsd allows its deposit)
  assets: parseAssets(process.env.MARKETGATE_ASSETS ?? ''),
});

try {
  const result = await client.request('/v1/price', { symbol: 'BTC' });
  console.log(
    JSON.stringify({
      price: result.envelope.data.price,
      scheme: result.payment?.scheme,
      paid: result.payment?.chargedUsd,
      transaction: result.payment?.settle.transaction,
      spending: client.spending(),
    }),
  );
} catch (err) {
  if (!(err instanceof MarketgateError)) throw err;
  // err.charged: true, false, or 'unknown' (then err.payment.signature can be resent to get the answer it paid for)
  console.error(err.message, JSON.stringify({ charged: err.charged }));
  process.exit(1);
}
