import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  http,
  parseGwei,
  TransactionReceiptNotFoundError,
  type Address,
  type Chain,
  type Hash,
  type Hex,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { TallyError } from '../lib/errors.ts';

/** viem clients bound to one local node. */
export interface DevClients {
  chain: Chain;
  public: PublicClient;
  test: TestClient<'anvil'>;
  wallet: WalletClient;
}

/** Clients for a local node; polling is fast because the node is on this machine. */
export function devClients(rpcUrl: string, chainId: number): DevClients {
  const chain = defineChain({
    id: chainId,
    name: 'x402-tally devchain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { retryCount: 0, timeout: 30_000 });
  return {
    chain,
    public: createPublicClient({ chain, transport, pollingInterval: 20 }),
    test: createTestClient({ chain, transport, mode: 'anvil', pollingInterval: 20 }),
    wallet: createWalletClient({ chain, transport, pollingInterval: 20 }),
  };
}

export interface SendRequest {
  to?: Address;
  data: Hex;
  /** Gas limit. Default 200,000 (a transferWithAuthorization uses well under 100,000). */
  gas?: bigint;
}

// Far above anvil's base fee (1 gwei at genesis, falling on light blocks): never underpriced.
const MAX_FEE_PER_GAS = parseGwei('100');
const MAX_PRIORITY_FEE_PER_GAS = parseGwei('1');

/**
 * Signs transactions locally and submits them raw, with nonces counted here: no estimateGas or
 * fee lookups, so thousands of transactions are cheap, and it works with automine off (the pool
 * is not asked for a receipt). Nonces resync from the node after any failed submission.
 */
export class TxSender {
  private readonly nonces = new Map<string, Promise<number>>();

  constructor(readonly clients: DevClients) {}

  /** Submits one transaction and returns its hash; does not wait for it to be mined. */
  async send(account: LocalAccount, request: SendRequest): Promise<Hash> {
    const key = account.address.toLowerCase();
    const current =
      this.nonces.get(key) ??
      this.clients.public.getTransactionCount({ address: account.address, blockTag: 'pending' });
    // Chained so that concurrent sends from one account still get consecutive nonces.
    this.nonces.set(
      key,
      current.then((n) => n + 1),
    );
    try {
      const nonce = await current;
      const serialized = await account.signTransaction({
        type: 'eip1559',
        chainId: this.clients.chain.id,
        nonce,
        to: request.to,
        data: request.data,
        gas: request.gas ?? 200_000n,
        maxFeePerGas: MAX_FEE_PER_GAS,
        maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      });
      return await this.clients.public.sendRawTransaction({ serializedTransaction: serialized });
    } catch (error) {
      this.nonces.delete(key);
      throw error;
    }
  }

  /** Forgets every counted nonce (call after evm_revert or anything that rewinds the chain). */
  resetNonces(): void {
    this.nonces.clear();
  }
}

/** A transaction that was mined but reverted. */
export class TransactionRevertedError extends TallyError {
  constructor(readonly receipt: TransactionReceipt) {
    super(`transaction ${receipt.transactionHash} reverted in block ${receipt.blockNumber}`);
    this.name = 'TransactionRevertedError';
  }
}

/**
 * Waits until `hash` is mined (the node must be mining: automine or an explicit mine) and returns
 * its receipt; throws TransactionRevertedError when it reverted, unless `allowRevert`.
 */
export async function waitForReceipt(
  client: PublicClient,
  hash: Hash,
  options: { timeoutMs?: number; allowRevert?: boolean } = {},
): Promise<TransactionReceipt> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    try {
      const receipt = await client.getTransactionReceipt({ hash });
      if (receipt.status !== 'success' && !options.allowRevert) throw new TransactionRevertedError(receipt);
      return receipt;
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
    }
    if (Date.now() > deadline) throw new Error(`transaction ${hash} was not mined in time (is the node mining?)`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
