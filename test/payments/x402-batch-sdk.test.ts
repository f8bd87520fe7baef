// x402 batch-settlement end to end with the official pieces only, on the in-process EDR chain: the test
// contracts placed at the addresses @x402/evm hard-codes, an x402Facilitator with `exact` and
// BatchSettlementEvmScheme, an x402ResourceServer with both schemes behind a few lines of node:http glue,
// and the stock @x402/fetch client paying with BatchSettlementEvmScheme. Deposit → vouchers → claim →
// settle → cooperative refund of the unused deposit, every balance checked exactly on chain.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer, type HTTPAdapter } from '@x402/core/server';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClient, computeChannelId } from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as BatchServer, type BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountAt, startPaidWorld, type PaidWorld } from './world.ts';

const PRICE = 1000n; // $0.001 at 6 decimals
const payer = accountAt(2);
const payTo = accountAt(3).address;
const receiverAuthorizer = accountAt(4); // the server's claim/refund key

let world: PaidWorld;
let chain: PaidWorld['chain'];
let fx: PaidWorld['fx'];
let bs: NonNullable<PaidWorld['bs']>;
let fac: PaidWorld['fac'];
let server: Server;
let url: string;
let handlerCalls = 0;
let batchServer: BatchServer;
let manager: BatchSettlementChannelManager;
let batchClient: BatchClient;
let payFetch: typeof fetch;

/** The smallest node:http glue around x402HTTPResourceServer: verify, run the handler, settle on success. */
function serve(http: x402HTTPResourceServer): Server {
  return createServer(async (req, res) => {
    const u = new URL(req.url!, 'http://127.0.0.1');
    const header = (n: string) => {
      const v = req.headers[n.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    };
    const adapter: HTTPAdapter = {
      getHeader: header,
      getMethod: () => req.method!,
      getPath: () => u.pathname,
      getUrl: () => `http://127.0.0.1${req.url}`,
      getAcceptHeader: () => header('accept') ?? '',
      getUserAgent: () => header('user-agent') ?? '',
      getQueryParams: () => Object.fromEntries(u.searchParams),
      getQueryParam: (n) => u.searchParams.get(n) ?? undefined,
    };
    const context = { adapter, path: u.pathname, method: req.method!, paymentHeader: header('payment-signature') };
    const result = await http.processHTTPRequest(context);
    if (result.type === 'no-payment-required') return void res.writeHead(404).end();
    if (result.type === 'payment-error') {
      const r = result.response;
      res.writeHead(r.status, r.headers);
      return void res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? {}));
    }
    handlerCalls++;
    const body = JSON.stringify({ data: 'paid content' });
    const settled = await http.processSettlement(result.paymentPayload, result.paymentRequirements, result.declaredExtensions, {
      request: context,
      responseBody: Buffer.from(body),
    });
    if (!settled.success) {
      res.writeHead(settled.response.status, settled.response.headers);
      return void res.end(JSON.stringify(settled.response.body ?? {}));
    }
    res.writeHead(200, { 'content-type': 'application/json', ...settled.headers });
    res.end(body);
  });
}

beforeAll(async () => {
  // 1 token; the facilitator offers batch-settlement without a receiver authorizer of its own (the server brings one).
  world = await startPaidWorld({ payerIndex: 2, payToIndex: 3, fund: 1_000_000n, batch: true, chain: { allowBlocksWithSameTimestamp: true }, facilitator: { batch: {} } });
  ({ chain, fx, fac } = world);
  bs = world.bs!;

  batchServer = new BatchServer(payTo, { receiverAuthorizerSigner: receiverAuthorizer, withdrawDelay: 900 });
  const facilitator = new HTTPFacilitatorClient({ url: fac.url });
  const resourceServer = new x402ResourceServer(facilitator)
    .register(chain.network, new ExactEvmScheme())
    .register(chain.network, batchServer);
  const price = { amount: PRICE.toString(), asset: fx.usdc, extra: { name: 'Test USDC', version: '2' } };
  const http = new x402HTTPResourceServer(resourceServer, {
    'GET /paid': {
      accepts: [
        { scheme: 'exact', network: chain.network, payTo, price, maxTimeoutSeconds: 60 },
        { scheme: 'batch-settlement', network: chain.network, payTo, price, maxTimeoutSeconds: 60 },
      ],
      description: 'paid',
      mimeType: 'application/json',
    },
  });
  await http.initialize();
  manager = batchServer.createChannelManager(facilitator, chain.network, fx.usdc);
  server = serve(http);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/paid`;

  batchClient = new BatchClient(toClientEvmSigner(payer, chain.publicClient));
  const client = new x402Client().register(chain.network, batchClient);
  client.setSpendControls({ allowedAssets: [{ network: chain.network, asset: fx.usdc, maxAmountPerPayment: '10000' }] });
  payFetch = wrapFetchWithPayment(fetch, client);
}, 60_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await world?.close();
});

const channelId = () =>
  computeChannelId(
    {
      payer: payer.address,
      payerAuthorizer: payer.address,
      receiver: payTo,
      receiverAuthorizer: receiverAuthorizer.address,
      token: fx.usdc,
      withdrawDelay: 900,
      salt: `0x${'00'.repeat(32)}`,
    },
    chain.network,
  );

describe('batch-settlement with the official SDK pieces', () => {
  it('the 402 offers exact and batch-settlement, the latter with the server receiver authorizer and withdraw delay', async () => {
    const res = await fetch(url);
    expect(res.status).toBe(402);
    const { accepts } = JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString());
    expect(accepts.map((a: { scheme: string }) => a.scheme)).toEqual(['exact', 'batch-settlement']);
    expect(accepts[1].extra).toMatchObject({ receiverAuthorizer: receiverAuthorizer.address, withdrawDelay: 900, minDeposit: '10000' });
  });

  it('deposit → vouchers → claim → settle → refund of the unused deposit, exact on chain', async () => {
    const start = await fx.balanceOf(payer.address);
    const blockBefore = await chain.publicClient.getBlockNumber();

    // 1. The first call opens the channel: one deposit transaction through the ERC-3009 collector.
    const first = await payFetch(url);
    expect(first.status).toBe(200);
    const receipt = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    expect(receipt.success).toBe(true);
    const deposit = BigInt(receipt.amount!);
    expect(deposit).toBe(10n * PRICE); // the announced minDeposit (10 × price), within the client's cap (5 × 10000)
    expect((await chain.publicClient.getTransactionReceipt({ hash: receipt.transaction as `0x${string}` })).status).toBe('success');
    expect(await bs.channel(channelId())).toEqual({ balance: deposit, totalClaimed: 0n });
    expect(await fx.balanceOf(payer.address)).toBe(start - deposit);

    // 2. The next calls are vouchers only: no facilitator call, no transaction.
    const callsBefore = { ...fac.state.calls };
    const blockAfterDeposit = await chain.publicClient.getBlockNumber();
    for (let i = 0; i < 4; i++) {
      const res = await payFetch(url);
      expect(res.status).toBe(200);
      const r = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(r).toMatchObject({ success: true, transaction: '', extra: { chargedAmount: '1000', channelState: { chargedCumulativeAmount: String((i + 2) * 1000) } } });
    }
    expect(fac.state.calls).toEqual(callsBefore);
    expect(await chain.publicClient.getBlockNumber()).toBe(blockAfterDeposit);
    expect(handlerCalls).toBe(5);
    const charged = 5n * PRICE;

    // 3. Claim (accounting only) and settle (one transfer to the receiver).
    const { claims, settle } = await manager.claimAndSettle();
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) }]);
    expect(settle?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await bs.channel(channelId())).toEqual({ balance: deposit, totalClaimed: charged });
    expect(await bs.receiver(payTo, fx.usdc)).toEqual({ totalClaimed: charged, totalSettled: charged });
    expect(await fx.balanceOf(payTo)).toBe(charged);

    // 4. The client asks for its unused deposit back (cooperative refund through the server).
    const refund = await batchClient.refund(url);
    expect(refund).toMatchObject({ success: true, amount: String(deposit - charged) });
    expect(await fx.balanceOf(payer.address)).toBe(start - charged);
    expect(await bs.channel(channelId())).toEqual({ balance: charged, totalClaimed: charged });
    expect(await fx.balanceOf(bs.address)).toBe(0n);
    expect(handlerCalls).toBe(5); // the refund never ran the paid handler

    // deposit, claim, settle, refund: four transactions in all.
    expect((await chain.publicClient.getBlockNumber()) - blockBefore).toBe(4n);
  });
});
