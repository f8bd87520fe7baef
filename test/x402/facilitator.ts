// A local x402 facilitator: x402Facilitator + exact EVM scheme, served over plain node:http with the
// routes HTTPFacilitatorClient calls: GET /supported, POST /verify, POST /settle
// (body {x402Version, paymentPayload, paymentRequirements}; answers are the VerifyResponse / SettleResponse JSON).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { x402Facilitator } from "@x402/core/facilitator";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { createWalletClient, http, nonceManager, publicActions, type Chain } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { MNEMONIC } from "./chain.ts";

export type FacilitatorMode = "ok" | "drop-settle"; // drop-settle: destroy the socket on /settle (facilitator dies mid-call)

export async function startFacilitator(opts: { chain: Chain; rpcUrl: string; network: `${string}:${string}`; addressIndex?: number }) {
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

  const state = { mode: "ok" as FacilitatorMode, timings: [] as { op: string; ms: number; result: unknown }[] };
  const send = (res: any, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
  };
  const server: Server = createServer(async (req, res) => {
    try {
      if (req.method === "GET" && req.url === "/supported") return send(res, 200, facilitator.getSupported());
      if (req.method === "POST" && (req.url === "/verify" || req.url === "/settle")) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        if (req.url === "/settle" && state.mode === "drop-settle") return req.socket.destroy();
        const t0 = performance.now();
        const result =
          req.url === "/verify"
            ? await facilitator.verify(paymentPayload, paymentRequirements)
            : await facilitator.settle(paymentPayload, paymentRequirements);
        state.timings.push({ op: req.url.slice(1), ms: performance.now() - t0, result });
        return send(res, 200, result);
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
    state,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
