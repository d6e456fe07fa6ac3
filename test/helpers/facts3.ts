import { sql, type Kysely } from 'kysely';
import { BASE_USDC as USDC } from '../../src/config/index.ts';
import { createStagingTables, kyselyRunner, loadFacts } from '../../src/db/load-facts.ts';
import type { Schema } from '../../src/db/schema.ts';
import { blockHash } from './facts.ts';

/**
 * Direct writers of method 3.0.0's facts (migration 0029) for method tests: the rows the sync of
 * the 3.0.0 streams would store, written by hand so expected numbers can be worked out from the
 * fixture alone. (The sync itself, which decides these rows from logs, is tested with the chain.)
 */

interface Versioned {
  block: bigint;
  ts: bigint;
  addedSeq?: bigint;
  removedSeq?: bigint | null;
}

/** A USDC Transfer as stored in `transfers`, with its class (0 unpaired, 1 eip3009, 2 permit2_exact, 3 permit2_upto). */
export interface ClassedTransfer extends Versioned {
  tx: string;
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
  class: 0 | 1 | 2 | 3;
}

/** A `Claimed` log with claimAmount > 0 of a USDC channel: a batch_claims row. */
export interface Claim extends Versioned {
  tx: string;
  logIndex: number;
  /** The channel's config payer (never the claim's sender) and receiver. */
  payer: string;
  receiver: string;
  value: bigint;
  /** The 32-byte channel id; one per (payer, receiver) by default. */
  channel?: string;
}

/** A USDC Transfer from a seller: a seller_outgoing row. */
export interface Outgoing extends Versioned {
  tx: string;
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
}

const bytes = (hex: string) => Buffer.from(hex.slice(2), 'hex');
export const channelOf = (c: Claim) =>
  c.channel ?? `0x${(c.payer.slice(2, 34) + c.receiver.slice(2, 34)).padEnd(64, '0').slice(0, 64)}`;

/**
 * Stores transfers and claims as the store would: one block version per (block, hash, time,
 * seqs) through sql/store/load_facts.sql (transfers with their class; a claim's block as a block
 * row), then each claim in its block version with its channel (batch_channels, token USDC).
 */
export async function insertFacts3(
  db: Kysely<Schema>,
  facts: { transfers?: ClassedTransfer[]; claims?: Claim[] },
): Promise<void> {
  const transfers = facts.transfers ?? [];
  const claims = facts.claims ?? [];
  await db.transaction().execute(async (trx) => {
    const run = kyselyRunner(trx);
    await sql`select fact_partitions_cover(${[...transfers, ...claims].map((r) => r.block.toString())}::int8[])`.execute(
      trx,
    );
    await createStagingTables(run);
    const seq = (r: Versioned) => [
      (r.addedSeq ?? 1n).toString(),
      r.removedSeq == null ? null : r.removedSeq.toString(),
    ];
    for (const t of transfers) {
      const [added, removed] = seq(t);
      await sql`insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
                values (${t.tx}, ${t.logIndex}, ${blockHash(t.block)}, ${t.block.toString()}, ${t.ts.toString()},
                        ${t.from}, ${t.to}, ${t.value.toString()}, ${added}, ${removed}, ${t.class},
                        ${t.class === 0 ? null : t.logIndex + 1}, ${t.class === 1 ? `0x${t.tx.slice(2, 66)}` : null})`.execute(
        trx,
      );
    }
    for (const c of claims) {
      const [added, removed] = seq(c);
      await sql`insert into x402_load_blocks (n, h, ts, added, removed)
                values (${c.block.toString()}, ${blockHash(c.block)}, ${c.ts.toString()}, ${added}, ${removed})`.execute(
        trx,
      );
    }
    await loadFacts(run);
    for (const c of claims) {
      const [added, removed] = seq(c);
      await ensureAddresses(trx, [c.payer, c.receiver]);
      const channelId = await ensureChannel(trx, channelOf(c), c.payer, c.receiver, USDC);
      await sql`insert into batch_claims (value, block_id, log_index, channel_id, from_id, to_id, tx_hash)
                select ${c.value.toString()}::int8, b.block_id, ${c.logIndex}, ${channelId},
                       (select address_id from addresses where address = ${bytes(c.payer)}),
                       (select address_id from addresses where address = ${bytes(c.receiver)}),
                       ${bytes(c.tx)}
                  from blocks b
                 where b.block_id between ${c.block.toString()}::int8 * 1048576 and ${c.block.toString()}::int8 * 1048576 + 1048575
                   and b.block_hash = ${bytes(blockHash(c.block))} and b.block_timestamp = ${c.ts.toString()}::int8
                   and b.added_seq = ${added}::int8 and b.removed_seq is not distinct from ${removed}::int8`.execute(
        trx,
      );
    }
  });
}

/** Stores a seller's outgoing USDC transfers (seller_outgoing), each with its own block and seqs. */
export async function insertOutgoing(db: Kysely<Schema>, rows: Outgoing[]): Promise<void> {
  if (rows.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await sql`select outgoing_partitions_cover(${rows.map((r) => r.block.toString())}::int8[])`.execute(trx);
    await ensureAddresses(
      trx,
      rows.flatMap((r) => [r.from, r.to]),
    );
    for (const r of rows) {
      await sql`insert into seller_outgoing (value, block_number, block_timestamp, added_seq, removed_seq, log_index,
                                             from_id, to_id, tx_hash, block_hash)
                values (${r.value.toString()}::int8, ${r.block.toString()}::int8, ${r.ts.toString()}::int8,
                        ${(r.addedSeq ?? 1n).toString()}::int8,
                        ${r.removedSeq == null ? null : r.removedSeq.toString()}::int8, ${r.logIndex},
                        (select address_id from addresses where address = ${bytes(r.from)}),
                        (select address_id from addresses where address = ${bytes(r.to)}),
                        ${bytes(r.tx)}, ${bytes(blockHash(r.block))})`.execute(trx);
    }
  });
}

/** A batch-settlement channel (batch_channels) and one `ChannelCreated` of it at `block`. */
export async function insertChannelCreated(
  db: Kysely<Schema>,
  c: { channel: string; payer: string; receiver: string; token?: string; block: bigint; logIndex?: number },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const id = await ensureChannel(trx, c.channel, c.payer, c.receiver, c.token ?? USDC);
    await sql`insert into batch_channel_created (block_number, added_seq, removed_seq, log_index, channel_id, tx_hash, block_hash)
              values (${c.block.toString()}::int8, 1, null, ${c.logIndex ?? 0}, ${id},
                      ${bytes(`0x${'cc'.repeat(32)}`)}, ${bytes(blockHash(c.block))})`.execute(trx);
  });
}

async function ensureAddresses(db: Kysely<any>, addresses: string[]): Promise<void> {
  for (const a of [...new Set(addresses)].sort())
    await sql`insert into addresses (address) values (${bytes(a)}) on conflict do nothing`.execute(db);
}

async function ensureChannel(db: Kysely<any>, channel: string, payer: string, receiver: string, token: string) {
  await ensureAddresses(db, [payer, receiver, token]);
  const id = (a: string) => sql`(select address_id from addresses where address = ${bytes(a)})`;
  await sql`insert into batch_channels (withdraw_delay, payer_id, payer_authorizer_id, receiver_id, receiver_authorizer_id,
                                        token_id, channel, salt)
            values (86400, ${id(payer)}, ${id(payer)}, ${id(receiver)}, ${id(receiver)}, ${id(token)},
                    ${bytes(channel)}, ${bytes(`0x${'00'.repeat(32)}`)})
            on conflict (channel) do nothing`.execute(db);
  const row = await sql<{
    channel_id: number;
  }>`select channel_id from batch_channels where channel = ${bytes(channel)}`.execute(db);
  return row.rows[0]!.channel_id;
}
