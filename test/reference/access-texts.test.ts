// The sentences that tell clients how to authenticate and pay (llms.txt, OpenAPI's info.description) say
// what this server does: no x402 payment while x402 is off, and batch-settlement beside exact when it is on.
import { describe, expect, it } from 'vitest';
import { accessSummary, accessText } from '../../src/reference/access-guide.ts';
import { loadConfig } from '../../src/config.ts';
import { makeApp } from '../helpers.ts';

const PAY_TO = '0x1111111111111111111111111111111111111111';
const X402_ON = { X402_PAY_TO: PAY_TO, X402_FACILITATOR: 'http://127.0.0.1:9' };
const textFor = (env: Record<string, string>) => accessText(accessSummary(loadConfig(env)));
const KEY = "Paid endpoints accept an API key in the x-api-key header (no payment is taken when a key is sent). API keys are free: ask this server's operator for one.";

describe("llms.txt's access paragraph", () => {
  it('x402 off: whole sentences, no payment offered', () => {
    expect(textFor({})).toBe(`Free endpoints need nothing. ${KEY} x402 pay-per-call ($0.001) is not configured on this server, so paid endpoints need an API key.`);
  });

  it('x402 on, batch settlement off (false, or drain): the "exact" scheme only', () => {
    expect(textFor({ ...X402_ON, X402_BATCH_SETTLEMENT: 'drain' })).not.toContain('batch-settlement');
    const text = textFor({ ...X402_ON, X402_BATCH_SETTLEMENT: 'false' });
    expect(text).toContain(`${KEY} Or pay per call with x402 (protocol v2, scheme "exact"): $0.001 in the token 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 on eip155:8453, to ${PAY_TO}.`);
    expect(text).not.toContain('batch-settlement');
  });

  it('x402 on with batch settlement (auto, the default, or true): names it beside "exact"', () => {
    expect(textFor(X402_ON)).toContain('"batch-settlement" (one deposit');
    const text = textFor({ ...X402_ON, X402_BATCH_SETTLEMENT: 'true' });
    expect(text).toContain(
      'Or pay per call with x402 (protocol v2, scheme "exact", or "batch-settlement" (one deposit, then a signed voucher per call) when the 402 lists it beside "exact"): $0.001',
    );
  });
});

describe("llms.txt's MCP configuration follows the server's access", () => {
  it.each([
    [{}, { MARKETGATE_URL: 'http://127.0.0.1:3000', MARKETGATE_API_KEY: 'YOUR_API_KEY' }, /paid with an API key \(MARKETGATE_API_KEY\): this server takes no x402 payment/],
    [X402_ON, { MARKETGATE_URL: 'http://127.0.0.1:3000', MARKETGATE_WALLET_KEY: '0xYOUR_PRIVATE_KEY', MARKETGATE_MAX_SPEND_USD: '0.10' }, /or x402 \(MARKETGATE_WALLET_KEY/],
  ])('%o: a key where x402 is off, a wallet where it is on', async (env, mcpEnv, says) => {
    const { app } = await makeApp({ ...env, LOG_LEVEL: 'silent' });
    try {
      const text = (await app.inject({ url: '/llms.txt' })).body;
      const json = /\n(\{\n {2}"mcpServers"[\s\S]*?\n\})\n/.exec(text)?.[1];
      expect(JSON.parse(json!).mcpServers.marketgate.env).toEqual(mcpEnv);
      expect(text).toMatch(says);
    } finally {
      await app.close();
    }
  });
});

describe("OpenAPI's info.description", () => {
  it.each([
    [{}, "Paid operations need an API key (x-api-key): x402 payments are not configured on this server. API keys are free: ask this server's operator for one."],
    [X402_ON, "Paid operations accept an API key (x-api-key) or an x402 payment ($0.001 per call). API keys are free: ask this server's operator for one."],
  ])('%o: says what paid operations accept', async (env, says) => {
    const { app } = await makeApp({ ...env, LOG_LEVEL: 'silent' });
    try {
      const description = (app.swagger() as { info: { description: string } }).info.description;
      expect(description.endsWith(` ${says}`), description).toBe(true);
      if (!('X402_PAY_TO' in env)) expect(description).not.toMatch(/or an x402 payment/);
    } finally {
      await app.close();
    }
  });
});
