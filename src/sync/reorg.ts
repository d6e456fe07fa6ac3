import { sql, type Kysely } from 'kysely';
import { getCanonicalHeader, type AsOf, type ChainClient } from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import { TemporaryError } from '../lib/errors.ts';
import type { Logger } from '../lib/log.ts';

/** The stream tables whose rows carry their own block number, hash and visibility. */
const STREAM_ROW_TABLES = ['seller_outgoing', 'batch_channel_created', 'x402_proxy_pairings'] as const;
/** Every coverage table: [from_block, to_block] per seller or stream. */
const COVERAGE_TABLES = ['seller_coverage', 'stream_coverage', 'seller_outgoing_coverage'] as const;

export interface ReorgResult {
  /** Stored blocks found no longer canonical and marked removed. */
  orphanedBlocks: number;
  /** The lowest orphaned block number, when there was a reorg. */
  forkBlock: bigint | undefined;
}

/**
 * Finds stored blocks (above the as-of block too) that are no longer canonical and rolls their
 * facts back: their live block versions get removed_seq = runSeq, and with them every transfer
 * stored in them (never deleted: published generations keep seeing their rows), the rows of
 * method 3.0.0's streams stored from there up, and every seller's and stream's coverage is pulled back to the newest stored block still canonical, so the sync fetches
 * the new branch from there (a log that was orphaned and is canonical again is stored again, as a
 * new row: migration 0004). Walks the
 * stored blocks from the newest down and stops at the first one still canonical (everything below
 * a canonical block is canonical). Usually one request. Safe to re-run. With `finalBlock`, a
 * fork at or below it is refused (TemporaryError, nothing written): final blocks do not reorg.
 */
export async function rollbackReorgs(
  db: Kysely<Schema>,
  client: ChainClient,
  options: {
    asOf: AsOf;
    runSeq: bigint;
    signal?: AbortSignal;
    run?: <T>(fn: () => Promise<T>) => Promise<T>;
    log?: Logger;
    finalBlock?: bigint;
  },
): Promise<ReorgResult> {
  const run = options.run ?? ((fn) => fn());
  const orphaned: { number: bigint; hash: string }[] = [];
  // From the newest stored block down, above the as-of block too: a run whose as-of point is
  // lower than an earlier run's (the chain went back to a shorter branch) must not leave the
  // earlier branch's rows live for a later generation to count.
  let below = null as bigint | null;
  let canonicalAt: bigint | undefined;
  for (let pageSize = 1; ; pageSize = 64) {
    // Live block versions, newest first by the primary key (block_id = number * 2^20 + version);
    // a block stored by several runs has several live versions: one (number, hash) each.
    const { rows: versions } = await sql<{ block_number: bigint; block_hash: string }>`
      select block_id >> 20 as block_number, '0x' || encode(block_hash, 'hex') as block_hash from blocks
       where removed_seq is null
         and (${below?.toString() ?? null}::int8 is null or block_id < ${below?.toString() ?? null}::int8 * 1048576)
       order by block_id desc
       limit ${pageSize}`.execute(db);
    if (versions.length === 0) break;
    const rows = versions.filter(
      (r, i) =>
        i === 0 || r.block_number !== versions[i - 1]!.block_number || r.block_hash !== versions[i - 1]!.block_hash,
    );
    const canonical = await Promise.all(
      rows.map((r) => {
        const n = BigInt(r.block_number);
        if (n === options.asOf.number) return Promise.resolve(options.asOf.hash as string);
        return run(() => getCanonicalHeader(client, n, options.signal)).then((h) => h?.hash ?? null);
      }),
    );
    rows.forEach((r, i) => {
      const n = BigInt(r.block_number);
      if (canonical[i] === r.block_hash) canonicalAt ??= n;
      else if (canonicalAt === undefined || canonicalAt === n) orphaned.push({ number: n, hash: r.block_hash });
    });
    if (canonicalAt !== undefined) break;
    below = BigInt(versions[versions.length - 1]!.block_number);
  }
  if (orphaned.length === 0) return { orphanedBlocks: 0, forkBlock: undefined };

  const fork = orphaned.reduce((m, o) => (o.number < m ? o.number : m), orphaned[0]!.number);
  if (options.finalBlock !== undefined && fork <= options.finalBlock) {
    // Nothing is written: the facts stay, the next run (against a node in sync) goes on from them.
    throw new TemporaryError(
      `the node's chain parts from the stored one at block ${fork}, at or below block ${options.finalBlock}, which was final when ` +
        'the live generation was computed: the node is out of sync or serves another network; nothing was rolled back',
      {
        details: {
          forkBlock: fork.toString(),
          finalBlock: options.finalBlock.toString(),
          orphanedBlocks: orphaned.length,
        },
      },
    );
  }
  // Only blocks with logs (and chunk ends) are stored, so the branches may part anywhere above the
  // newest stored block still canonical: the sync reads again from the block after it (from the
  // start when none is), not from the lowest orphaned stored block, or it would miss logs of the new
  // branch (or of an old one come back) in the blocks between.
  const resumeFrom = canonicalAt === undefined ? 0n : canonicalAt + 1n;
  const numbers = orphaned.map((o) => o.number.toString());
  const hashes = orphaned.map((o) => o.hash);
  const seq = options.runSeq.toString();
  await db.transaction().execute(async (tx) => {
    // Every live version of each orphaned (number, hash), found by its block-id range.
    await sql`update blocks b set removed_seq = ${seq}::int8
                from unnest(${numbers}::int8[], ${hashes}::text[]) as o(n, h)
               where b.removed_seq is null
                 and b.block_id between o.n * 1048576 and o.n * 1048576 + 1048575
                 and b.block_hash = decode(substr(o.h, 3), 'hex')`.execute(tx);
    // The rows of method 3.0.0's streams that carry their own block (migrations 0029, 0032) are
    // marked removed from resumeFrom up, as their blocks are: each stream stores its chunks' last
    // blocks in `blocks` (src/sync/streams-store.ts), so every row above the newest canonical
    // stored block lies in a replaced block or in one the stream reads again from resumeFrom (a
    // row read again is stored again, as a new row). Claims and transfers follow their blocks.
    for (const table of STREAM_ROW_TABLES)
      await sql`update ${sql.table(table)} set removed_seq = ${seq}::int8
                 where removed_seq is null and block_number >= ${resumeFrom.toString()}::int8`.execute(tx);
    // Coverage [from_block, to_block] keeps only what lies below resumeFrom (possibly nothing).
    for (const table of COVERAGE_TABLES)
      await sql`update ${sql.table(table)}
                   set to_block = least(to_block, greatest(from_block, ${resumeFrom.toString()}::int8) - 1)
                 where to_block >= ${resumeFrom.toString()}::int8`.execute(tx);
  });
  options.log?.warn(
    { forkBlock: fork.toString(), resumeFrom: resumeFrom.toString(), orphanedBlocks: orphaned.length },
    'reorg rolled back',
  );
  return { orphanedBlocks: orphaned.length, forkBlock: fork };
}
