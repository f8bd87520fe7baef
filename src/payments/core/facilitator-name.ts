// The configured facilitator in words, for docs, the agent card and logs. Apart from facilitator.ts so
// that what describes the server does not load the x402 SDK (it loads only when x402 is on).
import type { PaymentSettings } from '../settings.ts';
import { urlOrigin } from '../../upstream/redact-url.ts';

/** Human name of the configured facilitator, for docs and the agent card. */
export function facilitatorName(x402: PaymentSettings): string {
  return x402.facilitator === 'coinbase-cdp' ? 'Coinbase CDP (https://api.cdp.coinbase.com/platform/v2/x402)' : urlOrigin(x402.facilitator);
}
