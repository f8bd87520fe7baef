// A local x402 facilitator: x402Facilitator + exact EVM scheme (and, on request, the batch-settlement scheme),
// served over plain node:http with the routes HTTPFacilitatorClient calls: GET /supported, POST /verify, POST /settle
// (body {x402Version, paymentPayload, paymentRequirements}; answers are the VerifyResponse / SettleResponse JSON).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Facilitator } from "@x402/core/facilitator";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { registerExactSvmScheme } from "@x402/svm/exact/facilitator";
import { createWalletClient, http, nonceManager, publicActions, type Chain } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { MNEMONIC } from "./chain.ts";

// drop-settle: destroy the socket on /settle, settling nothing (the facilitator dies mid-call).
// lose-settle-answer: settle, then destroy the socket instead of answering (the transfer lands; its answer is lost).
export type FacilitatorMode = "ok" | "drop-settle" | "lose-settle-answer";

export interface FacilitatorOptions {
  chain: Chain;
  rpcUrl: string;
  network: `${string}:${string}`;
  addressIndex?: number;
  /**
   * Also offer `batch-settlement`. `authorizerIndex`: the mnemonic index of a receiver-authorizer key the
   * facilitator advertises in /supported and signs claims and refunds with (servers may delegate to it);
   * omitted, servers must bring their own receiver-authorizer signer.
   */
  batch?: { authorizerIndex?: number };
  /** Also `exact` on Solana (@x402/svm's facilitator), paying fees with `feePayer`, over the ledger's JSON-RPC. */
  svm?: { feePayer: Parameters<typeof toFacilitatorSvmSigner>[0]; rpcUrl: string; network: `solana:${string}` };
  /** Wait this long before answering /verify and /settle (ms; default 0); `state.delays` changes it later. */
  delays?: { verifyMs?: number; settleMs?: number };
}

export async function startFacilitator(opts: FacilitatorOptions) {
  const account = mnemonicToAccount(MNEMONIC, { addressIndex: opts.addressIndex ?? 1, nonceManager });
  const client = createWalletClient({ account, chain: opts.chain, transport: http(opts.rpcUrl), pollingInterval: 50 }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    address: account.address,
    getCode: (a) => client.getCode(a),
    readContract: (a) => client.readContract({ ...a, args: a.args ?? [] } as any),
    verifyTypedData: (a) => client.verifyTypedData(a as any),
    writeContract: (a) => client.writeContract({ ...a, args: a.args ?? [] } as any),
    sendTransaction: (a) => client.sendTransaction(a),
    waitForTransactionReceipt: (a) => client.waitForTransactionReceipt(a),
  });
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, { signer, networks: opts.network });
  if (opts.svm) registerExactSvmScheme(facilitator, { signer: toFacilitatorSvmSigner(opts.svm.feePayer, { defaultRpcUrl: opts.svm.rpcUrl }), networks: opts.svm.network });
  if (opts.batch) {
    const authorizer = opts.batch.authorizerIndex === undefined ? undefined : mnemonicToAccount(MNEMONIC, { addressIndex: opts.batch.authorizerIndex });
    facilitator.register(opts.network, new BatchSettlementEvmScheme(signer, authorizer));
  }

  // calls: every request by route (GET /supported included), for counting facilitator round trips.
  // delays: added before answering /verify and /settle (ms), so a test can give the facilitator a hosted one's latency.
  // log: when each /verify and /settle arrived and was answered (performance.now() of this process).
  const state = {
    mode: "ok" as FacilitatorMode,
    timings: [] as { op: string; ms: number; result: unknown }[],
    calls: { supported: 0, verify: 0, settle: 0 },
    delays: { verifyMs: opts.delays?.verifyMs ?? 0, settleMs: opts.delays?.settleMs ?? 0 },
    log: [] as { op: "verify" | "settle"; receivedAt: number; answeredAt: number }[],
    /** Resolves once `op` has been received `count` times in all (an event to wait for, not a duration). */
    received(op: "verify" | "settle", count: number): Promise<void> {
      return new Promise((resolve) => {
        const check = () => (state.calls[op] >= count ? resolve() : void waiters.push(check));
        check();
      });
    },
  };
  const waiters: (() => void)[] = [];
  const wake = () => { for (const w of waiters.splice(0)) w(); };
  const send = (res: any, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
  };
  const server: Server = createServer(async (req, res) => {
    try {
      if (req.method === "GET" && req.url === "/supported") {
        state.calls.supported++;
        return send(res, 200, facilitator.getSupported());
      }
      if (req.method === "POST" && (req.url === "/verify" || req.url === "/settle")) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const op = req.url === "/verify" ? "verify" : "settle";
        state.calls[op]++;
        wake();
        if (op === "settle" && state.mode === "drop-settle") return req.socket.destroy();
        const t0 = performance.now();
        const delay = op === "verify" ? state.delays.verifyMs : state.delays.settleMs;
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        const result =
          op === "verify"
            ? await facilitator.verify(paymentPayload, paymentRequirements)
            : await facilitator.settle(paymentPayload, paymentRequirements);
        state.timings.push({ op, ms: performance.now() - t0, result });
        if (op === "settle" && state.mode === "lose-settle-answer") return req.socket.destroy();
        send(res, 200, result);
        state.log.push({ op, receivedAt: t0, answeredAt: performance.now() });
        return;
      }
      send(res, 404, { error: "not found" });
    } catch (e) {
      send(res, 500, { error: e instanceof Error ? e.message : String(e) });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    address: account.address,
    /** What GET /supported answers. */
    supported: () => facilitator.getSupported(),
    state,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
