/**
 * Method 3.0.0's traffic for bench/method.ts (issue 22's benchmark): besides EIP-3009 payments,
 * Permit2 proxy settlements (classes 2 and 3), batch-settlement claims (class 4) and internal
 * payments of both reasons, stored as the sync of those streams stores them (src/sync/streams-store.ts,
 * sql/store/store_chunk.sql), set-based and deterministic like the rest of the generator:
 *
 *   PERMIT2_SHARE=0.05   # payments settled through a Permit2 proxy, half `exact` (class 2), half
 *                        # `upto` (class 3, charging 50-100% of the listed price): a transfer with
 *                        # its class and proxy log index, and its x402_proxy_pairings row
 *   CLAIM_SHARE=0.02     # batch claims (class 4): a batch_claims row of 1-20 requests' worth, on a
 *                        # channel per (payer, seller) whose receiver is the seller (batch_channels,
 *                        # one batch_channel_created; half of the first load's channels created
 *                        # before the window); claim payers are 1,000 of the 100,000 payers
 *   INTERNAL_SHARE=0.10  # internal payments, any class, half of each reason:
 *                        #  seller_funded: paid by one of 4 probe wallets of the seller, which the
 *                        #    seller funded (a seller_outgoing row) 0-27.7 days before (at the
 *                        #    earliest at the first block of its load, as a sync would have seen it)
 *                        #  same_operator: paid by another seller of the catalog whose second
 *                        #    listing shares a host with the seller's (sellers 2k+2 pay 2k+1, never
 *                        #    back, so no payment of this reason is also seller_funded); each such
 *                        #    transfer is also the payer's outgoing transfer (seller_outgoing)
 *   MIX=3                # the three above at issue 22's shares (0.05, 0.02, 0.10)
 *
 * A payment's class and reason come from hashes of its counter alone (hashint8extended, seeds of
 * their own), so after the run the generator counts what it made in the last generation's window
 * again (`expectedMix`), and bench/method.ts compares that with the published numbers.
 */
import { sql, type Kysely } from 'kysely';
import type { Schema } from '../src/db/schema.ts';
import { kyselyRunner, loadFacts } from '../src/db/load-facts.ts';
import {
  AS_OF_BLOCK,
  BLOCKS_PER_SECOND,
  LISTINGS,
  SELLERS,
  USDC,
  WINDOW_BLOCKS,
  blockTs,
  hex,
  payerIndex,
  seller,
  sellerIndex,
  value,
} from './method-gen.ts';

const issue22 = process.env.MIX === '3';
if (process.env.MIX !== undefined && !issue22)
  throw new Error('MIX must be 3 (issue 22: 5% Permit2, 2% claims, 10% internal)');
const share = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? (issue22 ? fallback : 0));
  if (!(v >= 0 && v <= 1)) throw new Error(`${name} must be in [0, 1]`);
  return v;
};
export const MIX = {
  permit2: share('PERMIT2_SHARE', 0.05),
  claims: share('CLAIM_SHARE', 0.02),
  internal: share('INTERNAL_SHARE', 0.1),
};
if (MIX.permit2 + MIX.claims > 1) throw new Error('PERMIT2_SHARE + CLAIM_SHARE must be at most 1');
export const MIX_ACTIVE = MIX.permit2 > 0 || MIX.claims > 0 || MIX.internal > 0;

/** Seller pairs (2k+1, 2k+2) sharing a host: as many as there are second listings (LISTINGS - SELLERS). */
const PAIRS = Math.floor(Math.min(LISTINGS - SELLERS, SELLERS) / 2);
if (MIX.internal > 0 && PAIRS < 1)
  throw new Error('INTERNAL_SHARE needs LISTINGS >= SELLERS + 2 (same_operator pairs)');
/** How far before its payment a funding lies, in blocks: under 27.8 days, inside the 30-day lookback. */
const FUNDING_SPREAD_BLOCKS = 12_000_000;
const LOOKBACK_BLOCKS = 2_592_000n * BLOCKS_PER_SECOND; // funding_lookback_seconds (docs/METHOD.md 2.11.1)
const WINDOW_START_BLOCK = AS_OF_BLOCK - WINDOW_BLOCKS;

/** A non-negative 31-bit hash of payment i under a seed of the mix's own (independent of method-gen's). */
const h = (i: string, seed: number) => `(hashint8extended((${i})::int8, ${2200 + seed}) & 2147483647)`;
const u = (i: string, seed: number) => `(${h(i, seed)} / 2147483648.0)`;
const bytes = (tag: string, expr: string) => `sha256(convert_to('${tag}' || (${expr}), 'UTF8'))`;
const addressBytes = (text: string) => `decode(substr(${text}, 3), 'hex')`;

/**
 * The resource URL of listing i (1..LISTINGS) of seller (i - 1) % SELLERS + 1: its own host, but
 * with the mix's internal payments the second listing of seller k <= 2 * PAIRS lies on the host of
 * its pair's first listing, which makes (2j+1, 2j+2) same_operator pairs (both ways, in the catalog).
 */
export function listingUrl(i: string): string {
  const own = `'https://s' || ${i} || '.example.com/api'`;
  if (MIX.internal === 0) return own;
  const k = `(${i} - ${SELLERS})`;
  return `case when ${i} > ${SELLERS} and ${k} <= ${2 * PAIRS}
               then 'https://s' || (case when ${k} % 2 = 1 then ${k} + 1 else ${k} - 1 end) || '.example.com/op' || ${i}
               else ${own} end`;
}

/**
 * Payments from..from+count-1 at blocks `blockExpr`: i, b, class, reason, s (the seller's index),
 * v, and fb (a seller_funded payment's funding block, not below `floor`).
 */
function mixRows(from: number, count: number, blockExpr: string, floor: bigint): string {
  const [p2, p3, p4] = [MIX.permit2 / 2, MIX.permit2, MIX.permit2 + MIX.claims];
  return `
    select i, b, class, reason, s,
           case class when 3 then greatest(1, v * (50 + ${h('i', 3)} % 51) / 100)
                      when 4 then v * (1 + ${h('i', 4)} % 20)
                      else v end as v,
           case when reason = 1 then greatest(b - floor(${u('i', 6)} * ${FUNDING_SPREAD_BLOCKS})::int8, ${floor}) end as fb
      from (select i, b, class, reason, s, ${value('i', 's')} as v
              from (select i, b, class, reason,
                           case when reason = 2 then 2 * ((s0 - 1) % ${Math.max(PAIRS, 1)}) + 1 else s0 end as s
                      from (select i, ${blockExpr} as b, ${sellerIndex('i')} as s0,
                                   (case when ${u('i', 1)} < ${p2} then 2 when ${u('i', 1)} < ${p3} then 3
                                         when ${u('i', 1)} < ${p4} then 4 else 1 end)::int2 as class,
                                   (case when ${u('i', 2)} < ${MIX.internal / 2} then 1
                                         when ${u('i', 2)} < ${MIX.internal} then 2 else 0 end)::int2 as reason
                              from generate_series(${from}::int8, ${from + count - 1}::int8) i) g) c) x`;
}

/** What one load of the mix stores, where, and under which seq. */
export interface MixLoad {
  from: number;
  count: number;
  blockExpr: string;
  seq: number;
  /** The lowest block a funding may lie in: the first block this load covers. */
  floor: bigint;
  /** The first load: half of its new channels were created before the window. */
  initial: boolean;
}

/**
 * Loads payments of the mix in the caller's transaction, as the sync would have stored them:
 * transfers of classes 1-3 (through load_facts.sql), their proxy pairings, claims with their blocks,
 * channels and ChannelCreated rows, and the sellers' outgoing transfers (fundings, and the
 * same_operator payers' payments).
 */
export async function loadMixPayments(trx: Kysely<Schema>, load: MixLoad): Promise<void> {
  const run = kyselyRunner(trx);
  const seq = load.seq;
  const exec = (q: string) => sql.raw(q).execute(trx);
  await exec(`
    create temp table bench_mix on commit drop as
    select m.*,
           case when reason = 1 then ${hex('probe', `s * 4 + ${h('i', 5)} % 4`, 40)}
                when reason = 2 then ${seller('s + 1')}
                when class = 4 then ${hex('payer', `${payerIndex('i')} % 1000`, 40)}
                else ${hex('payer', payerIndex('i'), 40)} end as payer,
           ${seller('s')} as seller
      from (${mixRows(load.from, load.count, load.blockExpr, load.floor)}) m`);
  // The outgoing partitions first, before any fact table is touched (the rule of load-facts.ts)
  await exec(`select outgoing_partitions_cover(array(select fb from bench_mix where reason = 1
                                                 union select b from bench_mix where reason = 2 and class < 4))`);
  await exec(`
    insert into x402_load_transfers (tx, li, h, n, ts, f, t, v, added, removed, class, pair_li, nonce)
    select ${hex('tx', 'i', 64)}, 4 * i, ${hex('block', 'b', 64)}, b, ${blockTs('b')}, payer, seller, v, ${seq}, null,
           class, case when class = 1 then 0 else 4 * i + 1 end, case when class = 1 then ${hex('tx', 'i', 64)} end
      from bench_mix where class < 4;
    insert into x402_load_blocks (n, h, ts, added, removed)
    select distinct b, ${hex('block', 'b', 64)}, ${blockTs('b')}, ${seq}::int8, null::int8 from bench_mix where class = 4`);
  await loadFacts(run);
  // Addresses only a claim names (its channel's payer, the seller of a seller paid only by claims), the token
  await exec(`
    insert into addresses (address)
    select a from (select ${addressBytes('payer')} as a from bench_mix where class = 4
                   union select ${addressBytes('seller')} from bench_mix where class = 4
                   union select ${addressBytes(`'${USDC}'`)}) x
     where not exists (select 1 from addresses d where d.address = x.a)
     order by a on conflict do nothing`);
  // Classes 2 and 3: the proxy log (log index 4i + 1) pairing the transfer (4i) in its transaction
  await exec(`
    insert into x402_proxy_pairings (block_number, added_seq, removed_seq, log_index, transfer_log_index, class, tx_hash, block_hash)
    select b, ${seq}, null, 4 * i + 1, 4 * i, class, ${bytes('tx', 'i')}, ${bytes('block', 'b')}
      from bench_mix where class in (2, 3) order by b, 4 * i + 1`);
  if (MIX.claims > 0) await loadClaims(trx, load);
  // The sellers' outgoing transfers: each seller_funded payment's funding (log index 4i - 1, before
  // the payment at 4i when in its block), and every same_operator transfer, from a seller
  await exec(`
    insert into seller_outgoing (value, block_number, block_timestamp, added_seq, removed_seq, log_index,
                                 from_id, to_id, tx_hash, block_hash)
    select o.value, o.n, ${blockTs('o.n')}, ${seq}, null, o.li, fa.address_id, ta.address_id, o.tx, ${bytes('block', 'o.n')}
      from (select 100000 * (1 + ${h('i', 7)} % 50) as value, fb as n, 4 * i - 1 as li, seller as f, payer as t,
                   ${bytes('fund', 'i')} as tx
              from bench_mix where reason = 1
            union all
            select v, b, 4 * i, payer, seller, ${bytes('tx', 'i')} from bench_mix where reason = 2 and class < 4) o
      join addresses fa on fa.address = ${addressBytes('o.f')}
      join addresses ta on ta.address = ${addressBytes('o.t')}
     order by o.n, o.li`);
}

/** Class 4: the load's new channels (with a ChannelCreated each) and its claims in their blocks. */
async function loadClaims(trx: Kysely<Schema>, load: MixLoad) {
  const seq = load.seq;
  await sql
    .raw(
      `
    create temp table bench_mix_channels on commit drop as
    select distinct on (ch) ch, payer, seller, b, i
      from (select ${bytes('channel', "payer || ':' || seller")} as ch, payer, seller, b, i
              from bench_mix where class = 4) c
     order by ch, b, i;
    with added as (
      insert into batch_channels (withdraw_delay, payer_id, payer_authorizer_id, receiver_id, receiver_authorizer_id,
                                  token_id, channel, salt)
      select 86400, pa.address_id, pa.address_id, ra.address_id, ra.address_id,
             (select address_id from addresses where address = ${addressBytes(`'${USDC}'`)}),
             c.ch, ${bytes('salt', 'c.i')}
        from bench_mix_channels c
        join addresses pa on pa.address = ${addressBytes('c.payer')}
        join addresses ra on ra.address = ${addressBytes('c.seller')}
       where not exists (select 1 from batch_channels x where x.channel = c.ch)
       order by c.ch
      returning channel_id, channel)
    insert into batch_channel_created (block_number, added_seq, removed_seq, log_index, channel_id, tx_hash, block_hash)
    select n, ${seq}, null, 4 * c.i - 2, a.channel_id, ${bytes('open', 'c.i')}, ${bytes('block', 'n')}
      from added a
      join bench_mix_channels c on c.ch = a.channel
     cross join lateral (select case when ${load.initial} and get_byte(c.ch, 0) < 128
                                     then ${WINDOW_START_BLOCK} - 1 - (get_byte(c.ch, 1) * 256 + get_byte(c.ch, 2)) * 16
                                     else c.b end as n) x
     order by n, 4 * c.i - 2;
    insert into batch_claims (value, block_id, log_index, channel_id, from_id, to_id, tx_hash)
    select m.v, bl.block_id, 4 * m.i, ch.channel_id, ch.payer_id, ch.receiver_id, ${bytes('tx', 'm.i')}
      from bench_mix m
      join batch_channels ch on ch.channel = ${bytes('channel', "m.payer || ':' || m.seller")}
      join blocks bl
        on bl.block_id between m.b * 1048576 and m.b * 1048576 + 1048575
       and bl.block_hash = ${bytes('block', 'm.b')}
       and bl.added_seq = ${seq}
       and bl.removed_seq is null
     where m.class = 4
     order by bl.block_id, 4 * m.i`,
    )
    .execute(trx);
}

/**
 * The streams' coverage as a sync through `toBlock` leaves it (migration 0032): the proxies' and
 * the claims' from the window, the channels' from block 0, and every seller's outgoing transfers
 * from the lookback before the window. Updated to each steady run's as-of block.
 */
export async function coverStreams(db: Kysely<Schema>, toBlock: bigint): Promise<void> {
  const from = WINDOW_START_BLOCK - 1n;
  const outFrom = WINDOW_START_BLOCK - LOOKBACK_BLOCKS - 1n;
  await sql
    .raw(
      `
    insert into stream_coverage (stream, from_block, from_ts, to_block)
    values ('x402_proxies', ${from}, ${blockTs(String(from))}, ${toBlock}),
           ('x402_claims', ${from}, ${blockTs(String(from))}, ${toBlock}),
           ('x402_channels', 0, 0, ${toBlock})
        on conflict (stream) do update set to_block = excluded.to_block;
    insert into seller_outgoing_coverage (seller_address, from_block, from_ts, to_block)
    select ${seller('s')}, ${outFrom}, ${blockTs(String(outFrom))}, ${toBlock} from generate_series(1, ${SELLERS}) s
        on conflict (seller_address) do update set to_block = excluded.to_block`,
    )
    .execute(db);
}

export async function extendStreams(db: Kysely<Schema>, toBlock: bigint): Promise<void> {
  await sql`update stream_coverage set to_block = ${toBlock}`.execute(db);
  await sql`update seller_outgoing_coverage set to_block = ${toBlock}`.execute(db);
}

/** Payments (count, micro-USDC) per class and per reason, with the external ones. */
export interface MixCounts {
  classPayments: number[]; // eip3009, permit2_exact, permit2_upto, batch_settlement
  classRevenue: string[];
  external: [number, string];
  sellerFunded: [number, string];
  sameOperator: [number, string];
}

/**
 * What the generator made in generation `generation`'s window (payments after its window start,
 * at or before its as-of block and time), counted again from the loads' expressions: not from
 * the stored facts, and not from the method's tables.
 */
export async function expectedMix(db: Kysely<Schema>, generation: number, loads: readonly MixLoad[]) {
  const g = await db
    .selectFrom('generations')
    .select(['window_start_ts', 'as_of_ts', 'as_of_block'])
    .where('generation', '=', generation)
    .executeTakeFirstOrThrow();
  const union = loads
    .map((l) => `select class, reason, v, b from (${mixRows(l.from, l.count, l.blockExpr, l.floor)}) m${l.from}`)
    .join('\nunion all\n');
  const { rows } = await sql
    .raw<{ class: number; reason: number; n: string; total: string }>(
      `select class, reason, count(*)::text as n, sum(v)::text as total
         from (${union}) x
        where ${blockTs('b')} > ${g.window_start_ts} and ${blockTs('b')} <= ${g.as_of_ts} and b <= ${g.as_of_block}
        group by 1, 2`,
    )
    .execute(db);
  return countsOf(rows.map((r) => ({ ...r, n: Number(r.n), total: BigInt(r.total) })));
}

function countsOf(rows: { class: number; reason: number; n: number; total: bigint }[]): MixCounts {
  const sum = (f: (r: (typeof rows)[number]) => boolean): [number, string] => [
    rows.filter(f).reduce((a, r) => a + r.n, 0),
    rows
      .filter(f)
      .reduce((a, r) => a + r.total, 0n)
      .toString(),
  ];
  return {
    classPayments: [1, 2, 3, 4].map((c) => sum((r) => r.class === c)[0]),
    classRevenue: [1, 2, 3, 4].map((c) => sum((r) => r.class === c)[1]),
    external: sum((r) => r.reason === 0),
    sellerFunded: sum((r) => r.reason === 1),
    sameOperator: sum((r) => r.reason === 2),
  };
}

/** The same figures as published in the generation's gen_sellers (method 3.0.0's columns). */
export async function publishedMix(db: Kysely<Schema>, generation: number): Promise<MixCounts> {
  const { rows } = await sql<Record<string, string | null>>`
    select sum(class_payments_30d[1])::text as p1, sum(class_payments_30d[2])::text as p2,
           sum(class_payments_30d[3])::text as p3, sum(class_payments_30d[4])::text as p4,
           sum(class_revenue_30d_micro[1])::text as r1, sum(class_revenue_30d_micro[2])::text as r2,
           sum(class_revenue_30d_micro[3])::text as r3, sum(class_revenue_30d_micro[4])::text as r4,
           sum(external_payments_30d)::text as ep, sum(external_revenue_30d_micro)::text as er,
           sum(internal_seller_funded_payments_30d)::text as fp, sum(internal_seller_funded_revenue_30d_micro)::text as fr,
           sum(internal_same_operator_payments_30d)::text as op, sum(internal_same_operator_revenue_30d_micro)::text as orv
      from gen_sellers where generation = ${generation}`.execute(db);
  const r = rows[0]!;
  const n = (k: string) => Number(r[k] ?? 0);
  const m = (k: string) => r[k] ?? '0';
  return {
    classPayments: [n('p1'), n('p2'), n('p3'), n('p4')],
    classRevenue: [m('r1'), m('r2'), m('r3'), m('r4')],
    external: [n('ep'), m('er')],
    sellerFunded: [n('fp'), m('fr')],
    sameOperator: [n('op'), m('orv')],
  };
}

/** Rows of each 3.0.0 stream table (the outgoing-transfer volume among them). */
export async function streamRows(db: Kysely<Schema>): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, string>>`
    select (select count(*) from transfers where class = 2)::text as transfers_permit2_exact,
           (select count(*) from transfers where class = 3)::text as transfers_permit2_upto,
           (select count(*) from x402_proxy_pairings)::text as x402_proxy_pairings,
           (select count(*) from batch_claims)::text as batch_claims,
           (select count(*) from batch_channels)::text as batch_channels,
           (select count(*) from batch_channel_created)::text as batch_channel_created,
           (select count(*) from seller_outgoing)::text as seller_outgoing,
           (select count(distinct from_id) from seller_outgoing)::text as seller_outgoing_senders`.execute(db);
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}
