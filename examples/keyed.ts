// Paying with an API key: paid routes are served on the key (x-api-key), nothing is paid on chain.
//   MARKETGATE_URL=http://127.0.0.1:3000 MARKETGATE_API_KEY=… node --import tsx examples/keyed.ts
// In your own project: import { createClient, MarketgateError } from 'marketgate/client';
import { createClient, MarketgateError } from '../src/client/index.ts';

const client = createClient({ baseUrl: process.env.MARKETGATE_URL ?? 'http://127.0.0.1:3000', apiKey: process.env.MARKETGATE_API_KEY });

try {
  const btc = await client.price({ symbol: 'BTC' }); // typed: btc.data.price is number | null
  const usage = await client.usage(); // what the key has used today
  console.log(JSON.stringify({ symbol: btc.data.symbol, price: btc.data.price, calls_today: usage.data.usage.current_day.requests_made }));
} catch (err) {
  if (!(err instanceof MarketgateError)) throw err;
  console.error(err.message); // e.g. "/v1/price: 401 invalid or revoked API key; not charged"
  process.exit(1);
}
