import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChainClient, resolveAsOf } from '../../src/chain/index.ts';
import { isTemporary, TallyError } from '../../src/lib/errors.ts';
import { syncChain } from '../../src/sync/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { FakeChain, serveJsonRpc, type Hex, type RpcServer } from './fake-rpc.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { buildScenario, dumpFacts, resetFacts, SELLERS, USDC, WINDOW } from './scenario.ts';

const scenario = buildScenario();
let server: RpcServer;
/**
 * A request's time limit: far above what the fake node in this process takes even on a loaded
 * machine (where 500 ms was within reach), and below the hold of the proxy's injected timeout
 * (HOLD_MS), which must end in the client's timeout rather than in the proxy closing the connection.
 */
const TIMEOUT_MS = 5_000;
const HOLD_MS = 2 * TIMEOUT_MS;

beforeAll(async () => {
  server = await serveJsonRpc((m, p) => scenario.chain.call(m, p));
});
afterAll(async () => {
  await server.close();
});

async function syncOnce(db: TestDatabase, url: string, extra: { onProgress?: () => void; signal?: AbortSignal } = {}) {
  const client = createChainClient({ rpcUrls: [url], chainId: 8453, timeoutMs: TIMEOUT_MS, retryDelayMs: 5 });
  const asOf = await resolveAsOf(client, { asOfBlock: BigInt(scenario.asOfBlock) });
  const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db.db);
  return syncChain(db.db, client, {
    usdcAddress: USDC,
    sellers: SELLERS.map((s) => s.toUpperCase().replace('0X', '0x')),
    asOf,
    windowSeconds: WINDOW,
    runSeq: BigInt(rows[0]!.seq),
    blockRange: 500,
    ...extra,
  });
}

describe.each(backends())('syncChain over a fake node ($backend)', ({ backend }) => {
  let clean: Record<string, unknown[]>;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('default: stores exactly the transfers to sellers from the first day to the as-of block', async () => {
    await resetFacts(db.db);
    try {
      const stats = await syncOnce(db, server.url);
      const { rows } = await sql<{
        tx_hash: string;
        from_address: string;
        to_address: string;
        value: bigint;
        block_number: bigint;
        authorized: boolean;
      }>`
        select t.tx_hash, t.from_address, t.to_address, t.value, t.block_number, t.authorized
          from transfer_facts t order by t.block_number, t.log_index`.execute(db.db);
      const expected = [...scenario.expected].sort((a, b) => a.blockNumber - b.blockNumber);
      expect(
        rows
          .map((r) => [r.tx_hash, r.from_address, r.to_address, BigInt(r.value), Number(r.block_number), r.authorized])
          .sort(),
      ).toEqual(expected.map((e) => [e.txHash, e.from, e.to, e.value, e.blockNumber, e.authorized]).sort());
      expect(stats.transfers).toBe(scenario.expected.length);
      const coverage = await sql<{
        seller_address: string;
        from_block: bigint;
        from_ts: bigint;
        to_block: bigint;
      }>`select * from seller_coverage order by seller_address`.execute(db.db);
      expect(
        coverage.rows.map((c) => [c.seller_address, Number(c.from_block), Number(c.from_ts), Number(c.to_block)]),
      ).toEqual([...SELLERS].sort().map((s) => [s, scenario.firstBlock, scenario.dayStart, scenario.asOfBlock]));
      clean = await dumpFacts(db.db);
      // A second run stores nothing new and changes nothing.
      const again = await syncOnce(db, server.url);
      expect([again.transfers, again.authorizations, again.ranges]).toEqual([0, 0, 0]);
    } finally {
      await resetFacts(db.db);
    }
  });

  describe('behavior: faults injected by a proxy end with the rows of a clean run', () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await startFaultProxy(server.url);
    });
    afterAll(async () => {
      await proxy.close();
    });

    it.each([
      [
        '429 with Retry-After',
        () =>
          proxy.inject(
            'eth_getLogs',
            { kind: 'rate-limit', retryAfterSeconds: 1 },
            { kind: 'rate-limit', retryAfterSeconds: 1 },
          ),
      ],
      ['a timeout', () => proxy.inject('eth_getLogs', { kind: 'timeout', holdMs: HOLD_MS })],
      ['block range too large', () => (proxy.maxRange = 120)],
      ['duplicate log', () => proxy.inject('eth_getLogs', { kind: 'inconsistent', how: 'duplicate' })],
      ['log outside the range', () => proxy.inject('eth_getLogs', { kind: 'inconsistent', how: 'out-of-range' })],
      ['log of another address', () => proxy.inject('eth_getLogs', { kind: 'inconsistent', how: 'other-address' })],
      ['null result', () => proxy.inject('eth_getLogs', { kind: 'inconsistent', how: 'null' })],
      ['wrong block hash', () => proxy.inject('eth_getLogs', { kind: 'inconsistent', how: 'wrong-hash' })],
    ])('error: %s', async (_name, arrange) => {
      await resetFacts(db.db);
      try {
        proxy.maxRange = undefined;
        proxy.events.length = 0;
        arrange();
        await syncOnce(db, proxy.url);
        expect(proxy.pending()).toBe(0);
        expect(proxy.events.some((e) => e.fault !== undefined)).toBe(true);
        expect(await dumpFacts(db.db)).toEqual(clean);
      } finally {
        proxy.maxRange = undefined;
      }
    });

    it('behavior: honours Retry-After', async () => {
      await resetFacts(db.db);
      try {
        proxy.events.length = 0;
        proxy.inject('eth_getLogs', { kind: 'rate-limit', retryAfterSeconds: 2 });
        await syncOnce(db, proxy.url);
        const limited = proxy.events.find((e) => e.fault === 'rate-limit')!;
        const retried = proxy.events.find((e) => e !== limited && e.params === limited.params)!;
        // retryDelayMs is 5 ms: only the header explains waiting (at least) its 2 seconds.
        expect(retried.at - limited.at).toBeGreaterThanOrEqual(1_950);
        expect(await dumpFacts(db.db)).toEqual(clean);
      } finally {
        await resetFacts(db.db);
      }
    });
    it('error: a Retry-After longer than MAX_RETRY_AFTER_MS is not waited for: a temporary failure naming the wait', async () => {
      await resetFacts(db.db);
      try {
        proxy.inject('eth_getLogs', { kind: 'rate-limit', retryAfterSeconds: 3600 });
        const failure = await syncOnce(db, proxy.url).catch((error: unknown) => error);
        expect(isTemporary(failure)).toBe(true);
        expect((failure as Error).message).toMatch(
          /asked to wait 3600 s before eth_getLogs \(more than 120 s\); run again later/,
        );
      } finally {
        await resetFacts(db.db);
      }
    });
  });

  it('behavior: a backfill leaves the planner statistics of the fact tables current (the method runs next, before autovacuum)', async () => {
    await resetFacts(db.db);
    try {
      const stats = await syncOnce(db, server.url);
      expect(stats.transfers).toBe(scenario.expected.length);
      // ANALYZE of a table this small reads every row: its estimate is the exact row count.
      const { rows } = await sql<{ reltuples: number; stored: number }>`
        select c.reltuples::float8 as reltuples, (select count(*) from transfers)::float8 as stored
          from pg_class c where c.oid = 'transfers'::regclass`.execute(db.db);
      expect(Number(rows[0]!.stored)).toBeGreaterThan(0);
      expect(Number(rows[0]!.reltuples)).toBe(Number(rows[0]!.stored));
    } finally {
      await resetFacts(db.db);
    }
  });

  it('behavior: a run stopped after some chunks and restarted stores what one run stores', async () => {
    await resetFacts(db.db);
    try {
      const stop = new AbortController();
      let chunks = 0;
      await expect(
        syncOnce(db, server.url, {
          signal: stop.signal,
          onProgress: () => {
            if (++chunks === 7) stop.abort(new Error('killed'));
          },
        }),
      ).rejects.toThrow('killed');
      const partial = await dumpFacts(db.db);
      expect(partial.transfers!.length).toBeLessThan(clean.transfers!.length);
      const stats = await syncOnce(db, server.url);
      const facts = await dumpFacts(db.db);
      // Same rows, except that rows stored by the first run carry its seq.
      const strip = (rows: unknown[]) => rows.map((r) => String(r).replace(/"added_seq":"\d+"/, ''));
      // Blocks holding a log are the same. The other stored blocks are chunk ends, which depend on
      // where the second run resumed (a run sizes its chunks by the density it has seen since it
      // started: src/sync/chunk-size.ts); each of them must be the chain's own block.
      // (an AuthorizationUsed is kept only folded into the transfer it pairs: its block, when it
      // holds no transfer, counts with the others)
      const withLogs = new Set(facts.transfers!.map((r) => JSON.parse(String(r)).block_number as string));
      const split = (rows: unknown[]) => {
        const parsed = rows.map((r) => JSON.parse(String(r)) as { block_number: string; block_hash: string });
        return {
          logs: strip(rows.filter((_r, i) => withLogs.has(parsed[i]!.block_number))),
          ends: parsed.filter((b) => !withLogs.has(b.block_number)),
        };
      };
      const [got, want] = [split(facts.blocks!), split(clean.blocks!)];
      expect(got.logs).toEqual(want.logs);
      for (const b of [...got.ends, ...want.ends])
        expect(b.block_hash).toBe(scenario.chain.hash(Number(b.block_number)));
      const { blocks: _b1, ...factRest } = facts;
      const { blocks: _b2, ...cleanRest } = clean;
      expect(Object.fromEntries(Object.entries(factRest).map(([k, v]) => [k, strip(v)]))).toEqual(
        Object.fromEntries(Object.entries(cleanRest).map(([k, v]) => [k, strip(v)])),
      );
      expect(stats.transfers + partial.transfers!.length).toBe(clean.transfers!.length);
    } finally {
      await resetFacts(db.db);
    }
  });

  /**
   * Runs `body` against a fake node of its own (head 100) that syncs SELLERS[0] into the test's
   * database, starting from no facts and removing them afterwards.
   */
  async function withOwnNode(body: (node: Awaited<ReturnType<typeof ownNode>>, seller: string) => Promise<void>) {
    await resetFacts(db.db);
    const seller = SELLERS[0]!;
    const node = await ownNode(seller);
    try {
      await body(node, seller);
    } finally {
      await node.close();
      await resetFacts(db.db);
    }
  }
  async function ownNode(seller: string) {
    const chain = new FakeChain({ usdc: USDC, head: 100, genesisTimestamp: 1_767_225_600, blockTime: 2 });
    const node = await serveJsonRpc((m, p) => chain.call(m, p));
    const sync = async () => {
      const client = createChainClient({ rpcUrls: [node.url], chainId: 8453, retryDelayMs: 5 });
      const asOf = await resolveAsOf(client, {});
      const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db.db);
      const runSeq = BigInt(rows[0]!.seq);
      await syncChain(db.db, client, {
        usdcAddress: USDC,
        sellers: [seller],
        asOf,
        windowSeconds: WINDOW,
        runSeq,
        blockRange: 50,
      });
      return runSeq;
    };
    /** The verified payments a generation of run `seq` would see (the view's visibility rule). */
    const visible = async (seq: bigint) => {
      const { rows } = await sql<{ tx_hash: string }>`
        select tx_hash from transfer_facts
         where authorized and visible_at(added_seq, removed_seq, ${seq}::int8)
         order by tx_hash`.execute(db.db);
      return rows.map((r) => r.tx_hash);
    };
    return { chain, sync, visible, close: () => node.close() };
  }
  const payer = `0x${'9a'.repeat(20)}`;
  const txOf = (n: number) => `0x${n.toString(16).padStart(64, 'c')}` as Hex;

  it('behavior: a reorg whose new branch pays in blocks below every stored orphaned block is read from the last canonical stored block', async () => {
    await withOwnNode(async ({ chain, sync, visible }, seller) => {
      chain.settle(10, txOf(0x10), payer, seller, 500n, 0n);
      chain.settle(90, txOf(0xa1), payer, seller, 1_000n, 1n);
      const first = await sync(); // stores blocks 10, 90, and chunk ends: 49 the highest below 88, then 99, 100
      chain.reorg(88, 'branch-b'); // the branches part at 88; the lowest stored orphaned block is 90
      chain.settle(89, txOf(0xb1), payer, seller, 3_000n, 3n);
      chain.options.head = 110;
      const second = await sync();
      expect(await visible(first)).toEqual([txOf(0x10), txOf(0xa1)]);
      expect(await visible(second)).toEqual([txOf(0x10), txOf(0xb1)]);
    });
  });

  it('behavior: one payer settling twice in one transaction gives two payments, each stored once', async () => {
    await withOwnNode(async ({ chain, sync }, seller) => {
      chain.settle(50, txOf(0xd1), payer, seller, 1_000n, 7n); // AuthorizationUsed #0, Transfer #1
      chain.settle(50, txOf(0xd1), payer, seller, 2_000n, 8n); // AuthorizationUsed #2, Transfer #3
      await sync();
      const { rows } = await sql<{ log_index: number; value: bigint; authorized: boolean }>`
        select log_index, value, authorized from transfer_facts order by log_index`.execute(db.db);
      expect(rows.map((r) => [Number(r.log_index), BigInt(r.value), r.authorized])).toEqual([
        [1, 1_000n, true],
        [3, 2_000n, true],
      ]);
    });
  });

  it('error: a transfer of 2^63 micro-USDC or more stops the sync with a failure (exit 1) naming tx_hash:log_index, storing nothing of its chunk', async () => {
    await withOwnNode(async ({ chain, sync }, seller) => {
      chain.settle(5, txOf(0xe0), payer, seller, 2n ** 63n - 1n, 20n); // the largest value an int8 holds
      chain.settle(95, txOf(0xe1), payer, seller, 2n ** 63n, 21n); // AuthorizationUsed #0, Transfer #1
      const error = await sync().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(TallyError);
      expect(isTemporary(error)).toBe(false);
      expect((error as Error).message).toContain(`${txOf(0xe1)}:1 has value 9223372036854775808`);
      // Block 5's chunk was stored before block 95's (chunks are stored in block order, each at
      // most blockRange = 50 blocks); block 95's was not.
      const { rows } = await sql<{ tx_hash: string; value: string }>`
        select tx_hash, value::text as value from transfer_facts order by block_number`.execute(db.db);
      expect(rows).toEqual([{ tx_hash: txOf(0xe0), value: '9223372036854775807' }]);
    });
  });

  it('behavior: where payments are dense, chunks shrink so that each holds at most chunkTransfers transfers (the memory a sync holds is bounded)', async () => {
    await resetFacts(db.db);
    const seller = SELLERS[0]!;
    // One settlement in every block 1..600: a density of one transfer per block.
    const chain = new FakeChain({ usdc: USDC, head: 600, genesisTimestamp: 1_767_225_600, blockTime: 2 });
    for (let n = 1; n <= 600; n++)
      chain.settle(n, `0x${n.toString(16).padStart(64, '0')}`, payer, seller, 1_000n, BigInt(n));
    const node = await serveJsonRpc((m, p) => chain.call(m, p));
    try {
      const client = createChainClient({ rpcUrls: [node.url], chainId: 8453, retryDelayMs: 5 });
      const asOf = await resolveAsOf(client, {});
      const { rows } = await sql<{ seq: bigint }>`select nextval('ingest_seq') as seq`.execute(db.db);
      const chunks: [bigint, bigint, number][] = [];
      await syncChain(db.db, client, {
        usdcAddress: USDC,
        sellers: [seller],
        asOf,
        windowSeconds: WINDOW,
        runSeq: BigInt(rows[0]!.seq),
        blockRange: 512,
        chunkTransfers: 10,
        onProgress: (p) => chunks.push([p.fromBlock, p.toBlock, p.transfers]),
      });
      // The first chunk goes out before any density is known (one chunk is fetched ahead: the
      // second is sized after the first is seen), at 512 / 16 = 32 blocks: [0, 31] holds blocks
      // 1..31. Seen one a block, the next spans are 512 / 64 = 8 blocks (16 would hold 16
      // transfers): 8 transfers each, then block 600 alone.
      const expected: [bigint, bigint, number][] = [[0n, 31n, 31]];
      for (let from = 32n; from < 600n; from += 8n) expected.push([from, from + 7n, 8]);
      expected.push([600n, 600n, 1]);
      expect(chunks).toEqual(expected);
      const stored = await sql<{ payments: number; distinct: number }>`
        select count(*) filter (where authorized)::int4 as payments,
               count(distinct tx_hash) filter (where authorized)::int4 as distinct
          from transfer_facts`.execute(db.db);
      expect(stored.rows[0]).toEqual({ payments: 600, distinct: 600 });
    } finally {
      await node.close();
      await resetFacts(db.db);
    }
  });

  // A flip back to the very same blocks is a fault anvil cannot produce on demand (anvil_reorg
  // drops the snapshots that could bring the first branch back), so a fake node flips here.
  it('behavior: a chain that flips back to an orphaned branch gets its payments counted again, the other branch dropped', async () => {
    await withOwnNode(async ({ chain, sync, visible }, seller) => {
      const tx = txOf;
      const branchA = () => {
        chain.settle(90, tx(0xa1), payer, seller, 1_000n, 1n);
        chain.settle(95, tx(0xa2), payer, seller, 2_000n, 2n);
      };
      chain.settle(10, tx(0x10), payer, seller, 500n, 0n);
      branchA();
      const first = await sync();
      chain.reorg(88, 'branch-b'); // B replaces blocks 88.. and grows to 110
      chain.settle(92, tx(0xb1), payer, seller, 3_000n, 3n);
      chain.options.head = 110;
      const second = await sync();
      chain.reorg(88, ''); // back to A: the same hashes from block 88 on, the same logs, head 100
      branchA();
      chain.options.head = 100;
      const third = await sync();

      expect(await visible(first)).toEqual([tx(0x10), tx(0xa1), tx(0xa2)]);
      expect(await visible(second)).toEqual([tx(0x10), tx(0xb1)]);
      expect(await visible(third)).toEqual([tx(0x10), tx(0xa1), tx(0xa2)]);
      const { rows } = await sql<{ tx_hash: string; added_seq: bigint; removed_seq: bigint | null }>`
        select tx_hash, added_seq, removed_seq from transfer_facts order by tx_hash, added_seq`.execute(db.db);
      expect(
        rows.map((r) => [r.tx_hash, BigInt(r.added_seq), r.removed_seq === null ? null : BigInt(r.removed_seq)]),
      ).toEqual([
        [tx(0x10), first, null],
        [tx(0xa1), first, second],
        [tx(0xa1), third, null],
        [tx(0xa2), first, second],
        [tx(0xa2), third, null],
        [tx(0xb1), second, third], // above the third run's as-of block, yet no longer live
      ]);
      // The stored blocks: no block of branch B is live any more.
      const live = await sql<{
        n: bigint;
        h: string;
      }>`select block_id >> 20 as n, '0x' || encode(block_hash, 'hex') as h from blocks where removed_seq is null`.execute(
        db.db,
      );
      for (const b of live.rows) expect(b.h).toBe(chain.hash(Number(b.n)));
    });
  });
});
