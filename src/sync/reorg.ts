import { sql, type Kysely } from 'kysely';
import { getCanonicalHeader, type AsOf, type ChainClient } from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import type { Logger } from '../lib/log.ts';

export interface ReorgResult {
  /** Stored blocks found no longer canonical and marked removed. */
  orphanedBlocks: number;
  /** The lowest orphaned block number, when there was a reorg. */
  forkBlock: bigint | undefined;
}

/**
 * Finds stored blocks (at or below the as-of block) that are no longer canonical and rolls their
 * facts back: chain_blocks, usdc_transfers and usdc_authorizations rows of those blocks get
 * removed_seq = runSeq (never deleted: published generations keep seeing their rows), and every
 * seller's coverage is pulled back below the fork, so the sync fetches the new branch. Walks the
 * stored blocks from the newest down and stops at the first one still canonical (everything below
 * a canonical block is canonical). Usually one request. Safe to re-run.
 */
export async function rollbackReorgs(
  db: Kysely<Schema>,
  client: ChainClient,
  options: { asOf: AsOf; runSeq: bigint; signal?: AbortSignal; run?: <T>(fn: () => Promise<T>) => Promise<T>; log?: Logger },
): Promise<ReorgResult> {
  const run = options.run ?? ((fn) => fn());
  const orphaned: { number: bigint; hash: string }[] = [];
  let below = options.asOf.number + 1n;
  for (let pageSize = 1; ; pageSize = 64) {
    const { rows } = await sql<{ block_number: bigint; block_hash: string }>`
      select block_number, block_hash from chain_blocks
       where removed_seq is null and block_number < ${below.toString()}::int8
       order by block_number desc, block_hash
       limit ${pageSize}`.execute(db);
    if (rows.length === 0) break;
    const canonical = await Promise.all(
      rows.map((r) => {
        const n = BigInt(r.block_number);
        if (n === options.asOf.number) return Promise.resolve(options.asOf.hash as string);
        return run(() => getCanonicalHeader(client, n, options.signal)).then((h) => h?.hash ?? null);
      }),
    );
    let canonicalAt: bigint | undefined;
    rows.forEach((r, i) => {
      const n = BigInt(r.block_number);
      if (canonical[i] === r.block_hash) canonicalAt ??= n;
      else if (canonicalAt === undefined || canonicalAt === n) orphaned.push({ number: n, hash: r.block_hash });
    });
    if (canonicalAt !== undefined) break;
    below = BigInt(rows[rows.length - 1]!.block_number);
  }
  if (orphaned.length === 0) return { orphanedBlocks: 0, forkBlock: undefined };

  const fork = orphaned.reduce((m, o) => (o.number < m ? o.number : m), orphaned[0]!.number);
  const numbers = orphaned.map((o) => o.number.toString());
  const hashes = orphaned.map((o) => o.hash);
  const seq = options.runSeq.toString();
  await db.transaction().execute(async (tx) => {
    await sql`update chain_blocks set removed_seq = ${seq}::int8
               where removed_seq is null
                 and (block_number, block_hash) in (select * from unnest(${numbers}::int8[], ${hashes}::text[]))`.execute(tx);
    await sql`update usdc_transfers set removed_seq = ${seq}::int8
               where removed_seq is null and block_hash = any(${hashes}::text[])`.execute(tx);
    await sql`update usdc_authorizations set removed_seq = ${seq}::int8
               where removed_seq is null and block_hash = any(${hashes}::text[])`.execute(tx);
    // Coverage [from_block, to_block] keeps only what lies below the fork (possibly nothing).
    await sql`update seller_coverage
                 set to_block = least(to_block, greatest(from_block, ${fork.toString()}::int8) - 1)
               where to_block >= ${fork.toString()}::int8`.execute(tx);
  });
  options.log?.warn({ forkBlock: fork.toString(), orphanedBlocks: orphaned.length }, 'reorg below the as-of block rolled back');
  return { orphanedBlocks: orphaned.length, forkBlock: fork };
}
