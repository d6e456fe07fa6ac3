import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/index.ts';
import { FakeChain, type Hex } from './fake-rpc.ts';

export const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'; // mixed case, as providers echo it
export const DAY = 86_400;
export const WINDOW = 30 * DAY;

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex;

export const SELLERS = [addr(0xa1), addr(0xa2), addr(0xa3)];
export const NON_SELLER = addr(0xb1);
export const PAYERS = [addr(0xc1), addr(0xc2), addr(0xc3)];

export interface ExpectedTransfer {
  txHash: Hex;
  blockNumber: number;
  from: string;
  to: string;
  value: bigint;
  authorized: boolean;
}

/**
 * A fake chain of 41 days at one block per 10 minutes (5905 blocks) holding settlements, plain
 * transfers, self-payments, transfers to a non-seller, several settlements in one block and in
 * one transaction, some before the window's first day and one after the as-of block. `expected`
 * lists the Transfer rows a sync as of `asOfBlock` must store, worked out from what was sent and
 * from block timestamps (not from the indexer).
 */
export function buildScenario(options: { blockTimestampInLogs?: boolean } = {}) {
  const genesis = 1_700_000_000 - (1_700_000_000 % DAY) + 3_600; // 01:00 UTC on some day
  const chain = new FakeChain({
    usdc: USDC,
    head: 41 * 144,
    genesisTimestamp: genesis,
    blockTime: 600,
    blockTimestampInLogs: options.blockTimestampInLogs ?? false,
  });
  const asOfBlock = chain.options.head - 5;
  const asOfTs = chain.timestamp(asOfBlock);
  const dayStart = Math.floor((asOfTs - WINDOW) / DAY) * DAY;
  const firstBlock = Math.ceil((dayStart - genesis) / 600); // first block with timestamp >= dayStart
  const sent: ExpectedTransfer[] = [];
  let t = 1;
  let nonce = 1n;
  const settle = (block: number, from: string, to: string, value: bigint, txHash = tx(t++)) => {
    chain.settle(block, txHash, from, to, value, nonce++);
    sent.push({ txHash, blockNumber: block, from, to, value, authorized: true });
  };
  const plain = (block: number, from: string, to: string, value: bigint) => {
    const h = tx(t++);
    chain.transfer(block, h, from, to, value);
    sent.push({ txHash: h, blockNumber: block, from, to, value, authorized: false });
  };
  // Spread settlements over the whole chain: before the first day, in it, in the window.
  for (let block = 3; block <= chain.options.head; block += 37) {
    const i = block % 3;
    settle(block, PAYERS[i]!, SELLERS[(i + 1) % 3]!, BigInt(1_000 + block));
  }
  settle(firstBlock, PAYERS[0]!, SELLERS[0]!, 777n); // exactly the first block of the first day
  settle(firstBlock - 1, PAYERS[0]!, SELLERS[0]!, 778n); // the block before: not covered
  // Several settlements in one block, and two in one transaction.
  const busy = firstBlock + 1000;
  settle(busy, PAYERS[0]!, SELLERS[1]!, 10_000n);
  settle(busy, PAYERS[1]!, SELLERS[1]!, 20_000n);
  const shared = tx(t++);
  settle(busy, PAYERS[2]!, SELLERS[2]!, 30_000n, shared);
  settle(busy, PAYERS[1]!, SELLERS[0]!, 40_000n, shared);
  plain(firstBlock + 1200, PAYERS[1]!, SELLERS[2]!, 5_000n); // plain transfer to a seller
  settle(firstBlock + 1300, SELLERS[1]!, SELLERS[1]!, 9_000n); // self-payment
  settle(firstBlock + 1400, PAYERS[2]!, NON_SELLER, 8_000n); // to a non-seller
  settle(asOfBlock + 2, PAYERS[0]!, SELLERS[0]!, 6_000n); // after the as-of block
  const sellers = new Set(SELLERS);
  const expected = sent.filter((s) => sellers.has(s.to) && s.blockNumber >= firstBlock && s.blockNumber <= asOfBlock);
  return { chain, asOfBlock, asOfTs, dayStart, firstBlock, expected, sent };
}

/** Every stored chain fact, in a fixed order, as text: two syncs stored the same iff equal. */
export async function dumpFacts(db: Kysely<Schema>): Promise<Record<string, unknown[]>> {
  const q = async (text: string) =>
    (await sql.raw<Record<string, unknown>>(text).execute(db)).rows.map((r) =>
      JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
    );
  return {
    // (text forms, not ids: two syncs may number addresses in another order)
    blocks:
      await q(`select block_id >> 20 as block_number, '0x' || encode(block_hash, 'hex') as block_hash, block_timestamp,
                            added_seq::int8, removed_seq::int8, block_id & 1048575 as version
                       from blocks order by block_id`),
    transfers: await q(`select f.tx_hash, f.log_index, f.block_hash, f.block_number, f.block_timestamp, f.from_address,
                               f.to_address, f.value, f.added_seq, f.removed_seq, f.authorized, t.pair_log_index
                          from transfer_facts f join transfers t using (block_id, log_index)
                         order by f.tx_hash, f.log_index, f.block_hash, f.added_seq`),
    coverage: await q('select * from seller_coverage order by seller_address'),
  };
}

/** Empties the chain facts, so one database serves several cases of a test file. */
export async function resetFacts(db: Kysely<Schema>): Promise<void> {
  await sql`truncate blocks, transfers, addresses, seller_coverage`.execute(db);
  await sql`alter sequence ingest_seq restart`.execute(db);
}
