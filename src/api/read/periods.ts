import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import type { SellerPeriods } from '../schemas/responses.ts';
import { isoFromUnix, servedWindow, type GenerationRow } from './generation.ts';
import { readSeller } from './seller.ts';

/**
 * The period digests behind a seller's evidence_sha256 (method 2.0.0, docs/METHOD.md): one row
 * per period with a verified payment in the window, oldest first. The seller's digest is the
 * sha256 of the lines `period_start_unix:payments:sha256\n` of these rows. Under method 1.0.0
 * there are no periods (digest_period_seconds null, periods []).
 */
export async function readSellerPeriods(
  db: Kysely<Schema>,
  g: GenerationRow,
  address: string,
): Promise<z.input<typeof SellerPeriods>> {
  const s = await readSeller(db, g, address);
  const rows = await db
    .selectFrom('gen_seller_periods')
    .select(['period_start', 'payments', 'sha256'])
    .where('generation', '=', g.generation)
    .where('seller_address', '=', address)
    .orderBy('period_start')
    .execute();
  const period = (g.constants as { digest_period_seconds?: number }).digest_period_seconds;
  return {
    generation: g.generation,
    method_version: g.method_version,
    seller_address: address,
    slug: address,
    window: servedWindow(g),
    digest_period_seconds: period ?? null,
    evidence_sha256: s.evidence_sha256,
    periods: rows.map((r) => ({
      period_start: isoFromUnix(r.period_start),
      period_start_unix: Number(r.period_start),
      payments: r.payments,
      sha256: r.sha256,
    })),
  };
}
