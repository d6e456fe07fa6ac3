import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import { decodePaymentCursor, encodePaymentCursor } from '../cursor.ts';
import type { PaymentsPage } from '../schemas/responses.ts';
import { isoFromUnix, servedWindow, type GenerationRow } from './generation.ts';
import { hasClasses } from './classes.ts';
import { readSeller } from './seller.ts';

type Row = z.input<typeof PaymentsPage>['payments'][number];

export interface PaymentsParams {
  cursor?: string | undefined;
  limit: number;
}

/**
 * The seller's verified payments in the window (the `generation_payments` view, in_window),
 * newest first by (block_number, log_index) descending, after the cursor's position.
 */
export async function readPayments(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
  p: PaymentsParams,
): Promise<z.input<typeof PaymentsPage>> {
  const after = p.cursor === undefined ? undefined : decodePaymentCursor(p.cursor);
  await readSeller(db, g, address);
  const v3 = hasClasses(g);
  // A 1.x or 2.x generation's rows carry no class: its columns are not read, so a database still
  // being migrated (its view older than migration 0029) serves them as before (docs/data-model.md).
  let q = db
    .selectFrom('generation_payments')
    .select(['tx_hash', 'log_index', 'block_number', 'block_timestamp', 'payer', 'value'])
    .$if(v3, (qb) => qb.select(['class', 'internal_reason']))
    .where('generation', '=', g.generation)
    .where('seller_address', '=', address)
    .where('in_window', '=', true);
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('block_number', '<', after.blockNumber),
        eb.and([eb('block_number', '=', after.blockNumber), eb('log_index', '<', after.logIndex)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('block_number', 'desc')
    .orderBy('log_index', 'desc')
    .limit(p.limit + 1)
    .execute();
  const page = rows.slice(0, p.limit);
  const last = page[page.length - 1];
  return {
    count: page.length,
    next_cursor:
      rows.length > p.limit && last
        ? encodePaymentCursor({ blockNumber: last.block_number, logIndex: last.log_index })
        : null,
    generation: g.generation,
    method_version: g.method_version,
    seller_address: address,
    slug: address,
    window: servedWindow(g),
    payments: page.map((r) => ({
      tx_hash: r.tx_hash,
      log_index: r.log_index,
      block_number: r.block_number,
      block_timestamp: isoFromUnix(r.block_timestamp),
      payer: r.payer,
      value_micro: r.value,
      // Method 3.0.0's class and internal reason: null on 1.x and 2.x generations, whatever a view says.
      class: v3 && 'class' in r ? (r.class as Row['class']) : null,
      internal_reason: v3 && 'internal_reason' in r ? (r.internal_reason as Row['internal_reason']) : null,
    })),
  };
}
