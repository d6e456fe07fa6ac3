import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { BlockRecord, ChannelCreatedLog, ClaimedLog, ProxySettlement, TransferLog } from '../chain/index.ts';
import type { Schema } from '../db/index.ts';
import { TemporaryError } from '../lib/errors.ts';
import { advanceStream, type CoverageStep } from './streams-coverage.ts';
import { inChunk, refuseValue, storeBlocks, texts } from './streams-write.ts';

/**
 * The writers of method 3.0.0's streams (src/sync/streams.ts reads them; tables of migrations
 * 0029 and 0032, docs/data-model.md "3.0.0's other streams"). Like storeChunk for the USDC stream,
 * each stores ONE chunk of one stream in ONE transaction with its coverage step: a run killed
 * before the commit leaves nothing of the chunk, after it everything, so a rerun resumes at the
 * coverage's to_block + 1 and a log read twice is stored once (each insert skips a row already
 * live at the same block number, hash and log index). Rows are stamped with the run's seq
 * (added_seq) so that a generation published earlier never sees them.
 *
 * The rows are passed as arrays (unnest) on both backends: the streams are small next to the
 * USDC one (a few rows per chunk), so COPY (storeChunk's Postgres path) would buy nothing.
 * What the writers share is in ./streams-write.ts, the coverage they move in ./streams-coverage.ts.
 */

// ---------------------------------------------------------------------------------------------

/**
 * One chunk of the proxies' stream: its paired settlements (an unpaired proxy log pairs nothing
 * and is not kept), then the class of transfers already stored that they pair (class 0 only:
 * EIP-3009 wins), then the stream's coverage. Returns the pairings stored and transfers reclassed.
 */
export async function storeProxyChunk(
  db: Kysely<Schema>,
  write: { settlements: readonly ProxySettlement[]; end: BlockRecord; step: CoverageStep; runSeq: bigint },
): Promise<{ pairings: number; reclassed: number }> {
  const paired = write.settlements.filter(
    (s): s is ProxySettlement & { transfer: Exclude<ProxySettlement['transfer'], 'unpaired'> } =>
      s.transfer !== 'unpaired',
  );
  const seq = write.runSeq.toString();
  return inChunk(db, { facts: [], marks: [write.end] }, async (trx) => {
    await storeBlocks(trx, { facts: [], marks: [write.end] }, write.runSeq);
    if (paired.length === 0) {
      await advanceStream(trx, 'x402_proxies', write.step);
      return { pairings: 0, reclassed: 0 };
    }
    const stored = await sql<{ n: number }>`
      with stored as (
        insert into x402_proxy_pairings (block_number, added_seq, removed_seq, log_index, transfer_log_index, class, tx_hash, block_hash)
        select u.n, ${seq}::int8, null, u.li, u.tli, u.class, decode(substr(u.tx, 3), 'hex'), decode(substr(u.h, 3), 'hex')
          from unnest(${texts(paired.map((s) => s.blockNumber))}::int8[], ${paired.map((s) => s.logIndex)}::int4[],
                      ${paired.map((s) => s.transfer.logIndex)}::int4[],
                      ${paired.map((s) => (s.proxy === 'exact' ? 2 : 3))}::int2[],
                      ${paired.map((s) => s.txHash)}::text[], ${paired.map((s) => s.blockHash)}::text[])
               as u(n, li, tli, class, tx, h)
         where not exists (select 1 from x402_proxy_pairings p
                            where p.block_number = u.n and p.log_index = u.li
                              and p.block_hash = decode(substr(u.h, 3), 'hex') and p.removed_seq is null)
         order by u.n, u.li
        returning 1)
      select count(*)::int4 as n from stored`.execute(trx);
    // Transfers stored before their pairing (a database synced before this stream existed, or a
    // stream rolled back by a reorg and read again) get their class now.
    const reclassed = await reclassPaired(
      trx,
      sql`p.block_number between ${write.step.from.block.toString()}::int8 and ${write.step.toBlock.toString()}::int8`,
    );
    await advanceStream(trx, 'x402_proxies', write.step);
    return { pairings: Number(stored.rows[0]?.n ?? 0), reclassed };
  });
}

/**
 * Gives the live class-0 transfers that a live pairing (of those `which` selects) names their
 * class 2 or 3; the first proxy log pairing a transfer decides (EIP-3009's class 1 is never
 * changed). Returns how many changed.
 * (From the pairings: each one's block version by a subquery, so by the primary key's range of its
 * block number, then its transfer by primary key. As joins, the planner hashed every live block
 * to match a few pairings' hashes, or scanned every class-0 transfer for them: 170-360 ms for 70
 * new pairings at 200k payments, where this takes 1-10 ms; docs/benchmarks.md.)
 */
async function reclassPaired(db: Kysely<Schema> | Transaction<Schema>, which: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with pairing as (
      select distinct on (p.tx_hash, p.block_hash, p.transfer_log_index)
             p.block_number, p.block_hash, p.tx_hash, p.transfer_log_index, p.log_index, p.class
        from x402_proxy_pairings p
       where p.removed_seq is null and ${which}
       order by p.tx_hash, p.block_hash, p.transfer_log_index, p.log_index
    ), target as materialized (
      select (select b.block_id
                from blocks b
               where b.block_id between pairing.block_number * 1048576 and pairing.block_number * 1048576 + 1048575
                 and b.block_hash = pairing.block_hash
                 and b.removed_seq is null) as block_id,
             pairing.transfer_log_index, pairing.tx_hash, pairing.log_index, pairing.class
        from pairing
    ), changed as (
      update transfers x set class = target.class, pair_log_index = target.log_index
        from target
       where x.block_id = target.block_id
         and x.log_index = target.transfer_log_index
         and x.tx_hash = target.tx_hash
         and x.class = 0
      returning 1)
    select count(*)::int4 as n from changed`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The sync's last pass (src/sync/index.ts): the USDC stream and the proxies' stream run side by
 * side, so a transfer and its pairing stored by concurrent transactions may each have missed the
 * other (neither sees the other's uncommitted row). Once both streams are stored, the pairings
 * added since the last completed pass (stream_coverage.paired_seq, migration 0034) class the
 * transfers still at 0 that they name, and paired_seq becomes this run's seq, in one transaction.
 * Not only this run's pairings: a run killed after storing both streams and before this pass
 * leaves such a transfer, and the next run reads neither again (the test of killed runs found
 * it); its pairings are newer than paired_seq, so the next pass reads them. Older pairings need
 * no second look: a transfer stored after its pairing's run sees the pairing when it is stored
 * (sql/store/store_chunk.sql), and a pairing stored after its transfer classes it in its own
 * chunk (storeProxyChunk). So the pass reads this run's settlements (and a killed run's), not
 * every settlement of the window. Returns how many transfers changed.
 */
export function reclassNewPairings(db: Kysely<Schema>, runSeq: bigint): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ seq: string }>`
      select coalesce((select paired_seq from stream_coverage where stream = 'x402_proxies'), 0)::text as seq`.execute(
      trx,
    );
    const since = rows[0]?.seq ?? '0';
    const reclassed = await reclassPaired(trx, sql`p.added_seq > ${since}::int8`);
    await sql`
      update stream_coverage set paired_seq = greatest(coalesce(paired_seq, 0), ${runSeq.toString()}::int8)
       where stream = 'x402_proxies'`.execute(trx);
    return reclassed;
  });
}

/** The rows ChannelCreated adds: addresses, the channel once, and the log itself. */
export async function storeChannelsChunk(
  db: Kysely<Schema>,
  write: { created: readonly ChannelCreatedLog[]; end: BlockRecord; step: CoverageStep; runSeq: bigint },
): Promise<{ created: number }> {
  const c = write.created;
  const seq = write.runSeq.toString();
  const addresses = [
    ...new Set(
      c.flatMap((x) => [
        x.config.payer,
        x.config.payerAuthorizer,
        x.config.receiver,
        x.config.receiverAuthorizer,
        x.config.token,
      ]),
    ),
  ].sort();
  return inChunk(db, { facts: [], marks: [write.end] }, async (trx) => {
    await storeBlocks(trx, { facts: [], marks: [write.end] }, write.runSeq);
    if (c.length > 0) {
      await sql`
        insert into addresses (address)
        select a from (select decode(substr(x, 3), 'hex') as a from unnest(${addresses}::text[]) as u(x)) y
         where not exists (select 1 from addresses d where d.address = y.a)
         order by a
            on conflict do nothing`.execute(trx);
      const id = (column: string) =>
        sql`(select address_id from addresses where address = decode(substr(${sql.ref(column)}, 3), 'hex'))`;
      // One row a channel id: a repeated ChannelCreated carries the same config (the id is its hash).
      await sql`
        insert into batch_channels (withdraw_delay, payer_id, payer_authorizer_id, receiver_id, receiver_authorizer_id,
                                    token_id, channel, salt)
        select distinct on (u.ch) u.wd, ${id('u.pa')}, ${id('u.paa')}, ${id('u.re')}, ${id('u.rea')}, ${id('u.tok')},
               decode(substr(u.ch, 3), 'hex'), decode(substr(u.salt, 3), 'hex')
          from unnest(${c.map((x) => x.channelId)}::text[], ${texts(c.map((x) => x.config.withdrawDelay))}::int8[],
                      ${c.map((x) => x.config.payer)}::text[], ${c.map((x) => x.config.payerAuthorizer)}::text[],
                      ${c.map((x) => x.config.receiver)}::text[], ${c.map((x) => x.config.receiverAuthorizer)}::text[],
                      ${c.map((x) => x.config.token)}::text[], ${c.map((x) => x.config.salt)}::text[])
               as u(ch, wd, pa, paa, re, rea, tok, salt)
         where not exists (select 1 from batch_channels b where b.channel = decode(substr(u.ch, 3), 'hex'))
         order by u.ch
            on conflict (channel) do nothing`.execute(trx);
    }
    if (c.length === 0) {
      await advanceStream(trx, 'x402_channels', write.step);
      return { created: 0 };
    }
    const stored = await sql<{ n: number }>`
      with stored as (
        insert into batch_channel_created (block_number, added_seq, removed_seq, log_index, channel_id, tx_hash, block_hash)
        select u.n, ${seq}::int8, null, u.li, b.channel_id, decode(substr(u.tx, 3), 'hex'), decode(substr(u.h, 3), 'hex')
          from unnest(${texts(c.map((x) => x.blockNumber))}::int8[], ${c.map((x) => x.logIndex)}::int4[],
                      ${c.map((x) => x.channelId)}::text[], ${c.map((x) => x.txHash)}::text[],
                      ${c.map((x) => x.blockHash)}::text[]) as u(n, li, ch, tx, h)
          join batch_channels b on b.channel = decode(substr(u.ch, 3), 'hex')
         where not exists (select 1 from batch_channel_created x
                            where x.block_number = u.n and x.log_index = u.li
                              and x.block_hash = decode(substr(u.h, 3), 'hex') and x.removed_seq is null)
         order by u.n, u.li
        returning 1)
      select count(*)::int4 as n from stored`.execute(trx);
    await advanceStream(trx, 'x402_channels', write.step);
    return { created: Number(stored.rows[0]?.n ?? 0) };
  });
}

/**
 * One chunk of claims. Each claim's channel must be stored (its ChannelCreated comes before it on
 * chain, and the channels' stream is synced first): a claim of an unknown channel means the
 * node's logs are incomplete, a temporary fault. A claim is kept when its claimAmount is > 0 and
 * its channel's token is USDC; its payer and receiver are the channel's config (never the
 * submitting `sender`). Only kept claims are checked for a value the store cannot hold.
 */
export async function storeClaimsChunk(
  db: Kysely<Schema>,
  write: {
    claims: readonly ClaimedLog[];
    /** Headers of the claims' blocks (the claim's time is its block's). */
    blocks: readonly BlockRecord[];
    end: BlockRecord;
    usdcAddress: string;
    step: CoverageStep;
    runSeq: bigint;
  },
): Promise<{ claims: number; skipped: number }> {
  const usdc = write.usdcAddress.toLowerCase();
  const channelIds = [...new Set(write.claims.map((c) => c.channelId))];
  const tokens = new Map<string, string>();
  if (channelIds.length > 0) {
    const { rows } = await sql<{ channel: string; token: string }>`
      select '0x' || encode(c.channel, 'hex') as channel, '0x' || encode(a.address, 'hex') as token
        from batch_channels c join addresses a on a.address_id = c.token_id
       where c.channel = any(array(select decode(substr(x, 3), 'hex') from unnest(${channelIds}::text[]) as u(x)))`.execute(
      db,
    );
    for (const r of rows) tokens.set(r.channel, r.token);
  }
  const unknown = channelIds.find((id) => !tokens.has(id));
  if (unknown !== undefined)
    throw new TemporaryError(
      'a Claimed log names a channel no stored ChannelCreated log created: the node returned incomplete logs; run again',
      { details: { channel: unknown } },
    );
  const kept = write.claims.filter((c) => c.claimAmount > 0n && tokens.get(c.channelId) === usdc);
  for (const c of kept) refuseValue('claim', c, c.claimAmount);
  const keptBlocks = new Set(kept.map((c) => c.blockNumber));
  const facts = write.blocks.filter((b) => keptBlocks.has(b.number));
  const seq = write.runSeq.toString();
  return inChunk(db, { facts, marks: [write.end] }, async (trx) => {
    await storeBlocks(trx, { facts, marks: [write.end] }, write.runSeq);
    if (kept.length === 0) {
      await advanceStream(trx, 'x402_claims', write.step);
      return { claims: 0, skipped: write.claims.length };
    }
    const stored = await sql<{ n: number }>`
      with stored as (
        insert into batch_claims (value, block_id, log_index, channel_id, from_id, to_id, tx_hash)
        select u.v, b.block_id, u.li, c.channel_id, c.payer_id, c.receiver_id, decode(substr(u.tx, 3), 'hex')
          from unnest(${texts(kept.map((x) => x.blockNumber))}::int8[], ${kept.map((x) => x.logIndex)}::int4[],
                      ${kept.map((x) => x.channelId)}::text[], ${kept.map((x) => x.txHash)}::text[],
                      ${kept.map((x) => x.blockHash)}::text[], ${texts(kept.map((x) => x.claimAmount))}::int8[])
               as u(n, li, ch, tx, h, v)
          join batch_channels c on c.channel = decode(substr(u.ch, 3), 'hex')
          -- This run's version of the claim's block (storeBlocks just made or found it).
          join blocks b
            on b.block_id between u.n * 1048576 and u.n * 1048576 + 1048575
           and b.block_hash = decode(substr(u.h, 3), 'hex')
           and b.added_seq = ${seq}::int8
           and b.removed_seq is null
         where not exists (select 1 from blocks v
                             join batch_claims x on x.block_id = v.block_id and x.log_index = u.li
                            where v.block_id between u.n * 1048576 and u.n * 1048576 + 1048575
                              and v.block_hash = decode(substr(u.h, 3), 'hex')
                              and v.removed_seq is null)
         order by b.block_id, u.li
        returning 1)
      select count(*)::int4 as n from stored`.execute(trx);
    await advanceStream(trx, 'x402_claims', write.step);
    return { claims: Number(stored.rows[0]?.n ?? 0), skipped: write.claims.length - kept.length };
  });
}

/**
 * One chunk of a batch of sellers' outgoing USDC Transfers (seller_outgoing, partitioned by block
 * number: its partitions are created first, as the fact partitions are), then the batch's coverage.
 */
export async function storeOutgoingChunk(
  db: Kysely<Schema>,
  write: {
    transfers: readonly (TransferLog & { blockTimestamp: bigint })[];
    sellers: readonly string[];
    end: BlockRecord;
    step: CoverageStep;
    runSeq: bigint;
  },
): Promise<{ outgoing: number }> {
  const t = write.transfers;
  for (const x of t) refuseValue('transfer', x, x.value);
  const seq = write.runSeq.toString();
  const addresses = [...new Set(t.flatMap((x) => [x.from, x.to]))].sort();
  return inChunk(db, { facts: [], marks: [write.end] }, async (trx) => {
    if (t.length > 0)
      await sql`select outgoing_partitions_cover(${[...new Set(t.map((x) => x.blockNumber.toString()))]}::int8[])`.execute(
        trx,
      );
    await storeBlocks(trx, { facts: [], marks: [write.end] }, write.runSeq);
    let outgoing = 0;
    if (t.length > 0) {
      await sql`
        insert into addresses (address)
        select a from (select decode(substr(x, 3), 'hex') as a from unnest(${addresses}::text[]) as u(x)) y
         where not exists (select 1 from addresses d where d.address = y.a)
         order by a
            on conflict do nothing`.execute(trx);
      const stored = await sql<{ n: number }>`
        with stored as (
          insert into seller_outgoing (value, block_number, block_timestamp, added_seq, removed_seq, log_index,
                                       from_id, to_id, tx_hash, block_hash)
          select u.v, u.n, u.ts, ${seq}::int8, null, u.li, fa.address_id, ta.address_id,
                 decode(substr(u.tx, 3), 'hex'), decode(substr(u.h, 3), 'hex')
            from unnest(${texts(t.map((x) => x.blockNumber))}::int8[], ${t.map((x) => x.logIndex)}::int4[],
                        ${texts(t.map((x) => x.blockTimestamp))}::int8[], ${t.map((x) => x.from)}::text[],
                        ${t.map((x) => x.to)}::text[], ${texts(t.map((x) => x.value))}::int8[],
                        ${t.map((x) => x.txHash)}::text[], ${t.map((x) => x.blockHash)}::text[])
                 as u(n, li, ts, f, t, v, tx, h)
            join addresses fa on fa.address = decode(substr(u.f, 3), 'hex')
            join addresses ta on ta.address = decode(substr(u.t, 3), 'hex')
           where not exists (select 1 from seller_outgoing x
                              where x.block_number = u.n and x.log_index = u.li
                                and x.block_hash = decode(substr(u.h, 3), 'hex') and x.removed_seq is null)
           order by u.n, u.li
          returning 1)
        select count(*)::int4 as n from stored`.execute(trx);
      outgoing = Number(stored.rows[0]?.n ?? 0);
    }
    await sql`
      insert into seller_outgoing_coverage (seller_address, from_block, from_ts, to_block)
      select s, ${write.step.from.block.toString()}::int8, ${write.step.from.ts.toString()}::int8,
             ${write.step.toBlock.toString()}::int8
        from unnest(${[...write.sellers].sort()}::text[]) as u(s)
      on conflict (seller_address) do update
        set to_block = excluded.to_block
      -- (a row that does not move is not written again: no new row version; migration 0041)
      where seller_outgoing_coverage.to_block < excluded.to_block`.execute(trx);
    return { outgoing };
  });
}
