import { sql, type Kysely } from 'kysely';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainClient, resolveAsOf, type AsOf } from '../../src/chain/index.ts';
import type { Schema } from '../../src/db/index.ts';
import {
  buyerAccount,
  deployUsdc,
  fund,
  inOneBlock,
  latestBlock,
  mine,
  minedTransfers,
  plainTransfer,
  sendSettlement,
  sendSettlementsInOneTransaction,
  settle,
  startAnvil,
  type AnvilInstance,
  type MinedTransfer,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import { rpcRequest } from '../../src/devchain/rpc.ts';
import { syncChain } from '../../src/sync/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCatalog } from '../helpers/facts.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { dumpFacts, resetFacts } from './scenario.ts';
import { BASE_USDC as USDC } from '../../src/config/index.ts';

/**
 * The indexer against a real node (anvil) running Circle's FiatTokenV2_2 behind FiatTokenProxy at
 * the Base USDC address, with payments settled as an x402 facilitator settles them.
 */
const GENESIS = 1_760_000_000n;
const WINDOW = 2_592_000;
const S1: Address = '0x5e11e5e11e5e11e5e11e5e11e5e11e5e11e5e11e';
const S2: Address = '0x00000000000000000000000000000000005e1122';
const NON_SELLER: Address = '0x000000000000000000000000000000000000dead';
const [b0, b1, b2, b3] = [0, 1, 2, 3].map((n) => buyerAccount(n)) as [
  ReturnType<typeof buyerAccount>,
  ReturnType<typeof buyerAccount>,
  ReturnType<typeof buyerAccount>,
  ReturnType<typeof buyerAccount>,
];
const S3 = b3.address.toLowerCase() as Address; // a seller who also pays itself
const SELLERS = [S1, S2, S3];

let anvil: AnvilInstance;
let dep: UsdcDeployment;
let proxy: FaultProxy;
const sent: MinedTransfer[] = [];
let asOfBlock: bigint;

beforeAll(async () => {
  anvil = await startAnvil({ timestamp: GENESIS });
  dep = await deployUsdc(anvil.url);
  for (const b of [b0, b1, b2, b3]) sent.push(await fund(dep, b.address, 1_000_000_000n));
  sent.push(await settle(dep, { from: b0, to: S1, value: 111n })); // before the window's first day
  await mine(anvil.url, 33, 86_400); // 33 days of history, one block a day
  sent.push(await settle(dep, { from: b0, to: S1, value: 1_000n, form: 'vrs' }));
  sent.push(await settle(dep, { from: b1, to: S2, value: 2_000n, form: 'bytes' }));
  sent.push(await plainTransfer(dep, { from: b2, to: S1, value: 3_000n })); // not an x402 settlement
  sent.push(await settle(dep, { from: b3, to: S3, value: 4_000n })); // self-payment
  sent.push(await settle(dep, { from: b2, to: NON_SELLER, value: 5_000n })); // not a seller
  const { result } = await inOneBlock(anvil.url, async () => [
    await sendSettlement(dep, { from: b0, to: S2, value: 6_000n }),
    await sendSettlement(dep, { from: b1, to: S2, value: 7_000n, form: 'bytes' }),
    await sendSettlement(dep, { from: b2, to: S1, value: 8_000n }),
  ]);
  sent.push(...(await minedTransfers(dep, result)));
  sent.push(
    ...(await minedTransfers(
      dep,
      await sendSettlementsInOneTransaction(dep, [
        { from: b0, to: S1, value: 9_000n },
        { from: b1, to: S2, value: 10_000n, form: 'bytes' },
      ]),
    )),
  );
  await mine(anvil.url, 3);
  asOfBlock = (await latestBlock(anvil.url)).number;
  sent.push(await settle(dep, { from: b0, to: S1, value: 12_000n })); // after the as-of block
  proxy = await startFaultProxy(anvil.url);
});

afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
});

/** What must be stored, worked out from what the test sent and the window rule. */
function expectedRows(asOf: AsOf, transfers = sent) {
  const dayStart = ((asOf.timestamp - BigInt(WINDOW)) / 86_400n) * 86_400n;
  const sellers = new Set<string>(SELLERS);
  const stored = transfers.filter(
    (t) => sellers.has(t.to) && t.blockTimestamp >= dayStart && t.blockNumber <= asOf.number,
  );
  const key = (t: MinedTransfer) => `${t.hash}:${t.logIndex}:${t.from}:${t.to}:${t.value}`;
  return {
    stored: stored.map(key).sort(),
    payments: stored
      .filter((t) => t.kind === 'settlement' && t.from !== t.to)
      .map(key)
      .sort(),
  };
}

async function nextSeq(db: Kysely<Schema>): Promise<bigint> {
  const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db);
  return BigInt(rows[0]!.seq);
}

/**
 * A request's time limit: far above what the local node takes even on a loaded machine (where
 * 1 s was within reach), and below the hold of the proxy's injected timeout (HOLD_MS), which
 * must end in the client's timeout rather than in the proxy closing the connection.
 */
const TIMEOUT_MS = 5_000;
const HOLD_MS = 2 * TIMEOUT_MS;

async function run(db: Kysely<Schema>, url: string, asOfOptions: { asOfBlock?: bigint; confirmations?: number }) {
  const client = createChainClient({ rpcUrls: [url], chainId: 8453, timeoutMs: TIMEOUT_MS, retryDelayMs: 5 });
  const asOf = await resolveAsOf(client, asOfOptions);
  const runSeq = await nextSeq(db);
  const stats = await syncChain(db, client, {
    usdcAddress: USDC,
    sellers: SELLERS,
    asOf,
    windowSeconds: WINDOW,
    runSeq,
    blockRange: 16,
    ...(asOfOptions.confirmations === undefined ? {} : { confirmations: asOfOptions.confirmations }),
  });
  return { asOf, runSeq, stats };
}

/** The verified payments of a generation over the stored rows, through the method's view. */
async function generationPayments(db: Kysely<Schema>, asOf: AsOf, runSeq: bigint): Promise<string[]> {
  const snapshot = await insertCatalog(
    db,
    SELLERS.map((s, i) => ({ listing_id: String(i).padStart(64, '0'), seller_address: s })),
  );
  const generation = Number(runSeq) + 100;
  const windowStart = asOf.timestamp - BigInt(WINDOW);
  await sql`insert into generations (generation, status, run_seq, method_version, generated_at, as_of_block, as_of_block_hash, as_of_ts,
              window_seconds, window_start_ts, market_from_ts, catalog_snapshot_id, catalog_sha256, constants, sources)
            values (${generation}, 'building', ${runSeq}, '1.0.0', now(), ${asOf.number}, ${asOf.hash}, ${asOf.timestamp}, ${WINDOW},
              ${windowStart}, ${(windowStart / 86_400n) * 86_400n}, ${snapshot}, ${'c'.repeat(64)}, '{}', '[]')`.execute(
    db,
  );
  const { rows } = await sql<{ k: string }>`
    select tx_hash || ':' || log_index || ':' || payer || ':' || seller_address || ':' || value as k
      from generation_payments where generation = ${generation}`.execute(db);
  return rows.map((r) => r.k).sort();
}

async function storedTransfers(db: Kysely<Schema>, live = true): Promise<string[]> {
  const { rows } = await sql<{ k: string }>`
    select tx_hash || ':' || log_index || ':' || from_address || ':' || to_address || ':' || value as k
      from transfer_facts where (removed_seq is null) = ${live}`.execute(db);
  return rows.map((r) => r.k).sort();
}

describe.each(backends())('indexer on anvil with the real USDC contract ($backend)', ({ backend }) => {
  let db: TestDatabase;
  let clean: Record<string, unknown[]>;
  beforeAll(async () => {
    db = await freshDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('default: stores exactly the settlements sent, once, and the view counts only verified payments', async () => {
    await resetFacts(db.db);
    const { asOf, runSeq } = await run(db.db, anvil.url, { asOfBlock });
    const expected = expectedRows(asOf);
    expect(expected.payments.length).toBe(7); // guards the scenario itself: vrs, bytes, 3 in a block, 2 in a tx
    expect(await storedTransfers(db.db)).toEqual(expected.stored);
    expect(await generationPayments(db.db, asOf, runSeq)).toEqual(expected.payments);
    clean = await dumpFacts(db.db);
    await sql`delete from generations`.execute(db.db);
  });

  it('error: 429, a timeout, range too large and inconsistent logs through a proxy end with the clean rows', async () => {
    await resetFacts(db.db);
    proxy.maxRange = 5;
    proxy.inject(
      'eth_getLogs',
      { kind: 'rate-limit', retryAfterSeconds: 1 },
      { kind: 'timeout', holdMs: HOLD_MS },
      { kind: 'inconsistent', how: 'duplicate' },
      { kind: 'inconsistent', how: 'wrong-hash' },
      { kind: 'inconsistent', how: 'out-of-range' },
    );
    proxy.inject('eth_getBlockByNumber', { kind: 'rate-limit', retryAfterSeconds: 1 });
    try {
      await run(db.db, proxy.url, { asOfBlock });
    } finally {
      proxy.maxRange = undefined;
    }
    expect(proxy.pending()).toBe(0);
    expect(await dumpFacts(db.db)).toEqual(clean);
  });

  it('behavior: a reorg below the as-of point (confirmation depth) removes the orphaned payments and adds the new ones', async () => {
    await resetFacts(db.db);
    const snapshot = await rpcRequest<string>(anvil.url, 'evm_snapshot', []);
    try {
      const local: MinedTransfer[] = [];
      local.push(await settle(dep, { from: b0, to: S1, value: 21_000n }));
      local.push(await settle(dep, { from: b1, to: S2, value: 22_000n }));
      await mine(anvil.url, 2);
      const first = await run(db.db, anvil.url, { confirmations: 1 });
      const orphaned = local.filter((t) => t.blockNumber <= first.asOf.number);
      expect(orphaned.length).toBe(2);
      // Replace the last 4 blocks (deeper than the confirmation depth): both settlements vanish.
      await rpcRequest(anvil.url, 'anvil_reorg', [4, []]);
      dep.sender.resetNonces(); // the orphaned transactions' nonces are free again
      const fresh: MinedTransfer[] = [await settle(dep, { from: b2, to: S1, value: 23_000n })];
      await mine(anvil.url, 2);
      const second = await run(db.db, anvil.url, { confirmations: 1 });
      expect(second.stats.reorgedBlocks).toBeGreaterThan(0);
      const key = (t: MinedTransfer) => `${t.hash}:${t.logIndex}:${t.from}:${t.to}:${t.value}`;
      const removed = await sql<{ k: string; removed_seq: bigint }>`
        select tx_hash || ':' || log_index || ':' || from_address || ':' || to_address || ':' || value as k, removed_seq
          from transfer_facts where removed_seq is not null`.execute(db.db);
      expect(removed.rows.map((r) => r.k).sort()).toEqual(orphaned.map(key).sort());
      expect(removed.rows.every((r) => BigInt(r.removed_seq) === second.runSeq)).toBe(true);
      const live = expectedRows(second.asOf, [
        ...sent.filter((t) => t.blockNumber < orphaned[0]!.blockNumber),
        ...fresh,
      ]);
      expect(await storedTransfers(db.db)).toEqual(live.stored);
      expect(await generationPayments(db.db, second.asOf, second.runSeq)).toEqual(live.payments);
      // The first run's view of the facts is unchanged: it still sees the orphaned payments.
      const firstView = expectedRows(first.asOf, [...sent, ...local]);
      expect(await generationPayments(db.db, first.asOf, first.runSeq)).toEqual(firstView.payments);
    } finally {
      await rpcRequest(anvil.url, 'evm_revert', [snapshot]);
      dep.sender.resetNonces();
      await sql`delete from generations`.execute(db.db);
    }
  });
});
