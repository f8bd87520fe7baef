// What the chain says of the EIP-3009 authorizations this client signed, over the `rpcUrls` it was given: the
// token's `authorizationState(payer, nonce)` at the latest block, and that block's timestamp. An authorization
// unused at a block stamped at or after its validBefore can never be used (the token refuses it from then on):
// only then is its amount released from maxSpendUsd. Used: it was taken, whatever the server said. Anything
// else (not expired yet, no RPC for its network, a node that does not answer or serves another chain): still
// held. viem's public client is made on first use, per network.
import { createPublicClient, http, type Abi, type PublicClient } from 'viem';
import type { ChainAnswer, Expiring } from './spend.ts';

const AUTHORIZATION_STATE = [
  { type: 'function', name: 'authorizationState', stateMutability: 'view', inputs: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }], outputs: [{ type: 'bool' }] },
] as const satisfies Abi;

export class AuthorizationChain {
  private readonly clients = new Map<string, Promise<PublicClient | undefined>>();

  /** `rpcUrls`: a JSON-RPC endpoint per CAIP-2 network (`eip155:8453`); `timeoutMs`: bound of each RPC call. */
  constructor(
    private readonly rpcUrls: Record<string, string>,
    private readonly timeoutMs: number,
  ) {}

  /** Whether any network has an RPC endpoint (without one nothing is ever released). */
  get configured(): boolean {
    return Object.keys(this.rpcUrls).length > 0;
  }

  /** One answer per authorization, in order. Never throws: what cannot be read is `open`. */
  async ask(all: Expiring[]): Promise<ChainAnswer[]> {
    const answers: ChainAnswer[] = all.map(() => 'open');
    const networks = new Set(all.map((a) => a.network));
    await Promise.all(
      [...networks].map(async (network) => {
        const client = await this.client(network);
        if (!client) return;
        try {
          const block = await client.getBlock({ blockTag: 'latest' });
          await Promise.all(
            all.map(async (a, i) => {
              if (a.network !== network) return;
              const used = await client.readContract({ address: a.asset, abi: AUTHORIZATION_STATE, functionName: 'authorizationState', args: [a.payer, a.nonce], blockNumber: block.number });
              answers[i] = used ? 'used' : block.timestamp >= a.validBefore ? 'expired-unused' : 'open';
            }),
          );
        } catch {
          // The node did not answer: the authorizations stay held until it does.
        }
      }),
    );
    return answers;
  }

  /** The network's client, once its chain id is checked against the network's; undefined when it has no RPC or another chain. */
  private client(network: string): Promise<PublicClient | undefined> {
    const url = this.rpcUrls[network];
    const chainId = /^eip155:(\d+)$/.exec(network)?.[1];
    if (!url || !chainId) return Promise.resolve(undefined);
    let client = this.clients.get(network);
    if (!client) {
      const made = createPublicClient({ transport: http(url, { timeout: this.timeoutMs, retryCount: 0 }) });
      client = made.getChainId().then(
        (id) => (String(id) === chainId ? made : undefined),
        () => (this.clients.delete(network), undefined), // asked again next time
      );
      this.clients.set(network, client);
    }
    return client;
  }
}
