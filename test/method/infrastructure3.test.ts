import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/index.ts';
import { X402_INFRASTRUCTURE } from '../../src/api/read/classes.ts';
import { bundleFileText, publishGeneration, readGenerationHead } from '../../src/publish/index.ts';
import { get } from '../api/helpers.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { insertCatalog, insertCoverage, insertTransfers, type FixtureTransfer } from '../helpers/facts.ts';
import { AS_OF_BLOCK, DEC_10, MARKET_FROM_TS, block } from './fixture.ts';
import { compute } from './setup.ts';

/**
 * "x402 infrastructure is never a seller" (SPEC "Method 3.0.0") in the method and in the published
 * listing rows: one definition (migration 0035), so a 3.x generation's directory as the API serves
 * it, its listing rows in the view gen_listings and its bundle's listings.ndjson all agree, and a
 * 2.0.0 generation over the same catalog and facts keeps 2.x's rule (such a listing is a seller).
 *
 * Catalog (as the catalog reader stores it: every EVM payTo on Base USDC is `base_usdc`):
 * listing 1 paid to seller S, listing 2 to the ERC-3009 deposit collector, listing 3 to Permit2,
 * listing 4 on another rail. Facts, all on 2025-12-10 and EIP-3009: S is paid 100, 200, 300, 400
 * and 500 by payers P1, P2, P3, P1, P2; the collector 1,000 five times by the same payers (channel
 * deposits, under 3.0.0 no payment to any seller).
 *
 * By hand. 2.0.0: S 5 payments, 1,500, 3 payers, verified; the collector 5, 5,000, 3 payers,
 * verified; Permit2 none; market day 2025-12-10: 10 payments, 6,500, 2 sellers paid, 3 tracked
 * sellers and listings. 3.0.0: S the same; neither contract is a seller (no row, no rank); the day:
 * 5 payments, 1,500, 1 seller paid, 1 tracked seller and listing; listings 2 and 3 are other_rail,
 * without seller or numbers.
 */

const addr = (c: string) => `0x${c.repeat(40)}`;
const S = addr('a');
const COLLECTOR = '0x4020806089470a89826cb9fb1f4059150b550004';
const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
const PAYERS = [addr('1'), addr('2'), addr('3')];
const id = (n: number) => String(n).padStart(64, '0');

function transfers(): FixtureTransfer[] {
  const out: FixtureTransfer[] = [];
  for (let i = 0; i < 5; i++) {
    for (const [k, to, value] of [
      [0, S, BigInt(100 * (i + 1))],
      [1, COLLECTOR, 1_000n],
    ] as const) {
      const ts = DEC_10 + BigInt(3_600 * i + 60 * k);
      const from = PAYERS[i % 3]!;
      out.push({
        tx: `0x${(10 * i + k + 1).toString(16).padStart(64, '0')}`,
        logIndex: 1,
        block: block(ts),
        ts,
        from,
        to,
        value,
        authorizer: from,
      });
    }
  }
  return out;
}

/** The fields a listing row is compared on, as text (the API writes integers as numbers or strings). */
const fields = (r: Record<string, unknown>) => ({
  listing_id: r.listing_id,
  seller_address: r.seller_address ?? null,
  verifiability: r.verifiability,
  tier: r.tier,
  evidence_state: r.evidence_state,
  verified_revenue_30d_micro: r.verified_revenue_30d_micro == null ? null : String(r.verified_revenue_30d_micro),
  median_payment_30d_micro: r.median_payment_30d_micro == null ? null : String(r.median_payment_30d_micro),
  farm_flag: r.farm_flag ?? null,
  sibling_listings: Number(r.sibling_listings),
});

describe.each(backends())(
  'x402 infrastructure is never a seller under 3.x, in one definition, on $backend',
  ({ backend }) => {
    let t: TestDatabase;
    let app: FastifyInstance;
    let g2: number;
    let g3: number;

    beforeAll(async () => {
      t = await freshDatabase(backend);
      const snapshotId = await insertCatalog(t.db, [
        { listing_id: id(1), seller_address: S, category: 'inference' },
        { listing_id: id(2), seller_address: COLLECTOR, category: 'inference' },
        { listing_id: id(3), seller_address: PERMIT2, category: 'inference' },
        { listing_id: id(4), seller_address: null, category: 'inference' },
      ]);
      await insertTransfers(t.db, transfers());
      await insertCoverage(
        t.db,
        [S, COLLECTOR, PERMIT2].map((seller) => ({
          seller,
          fromTs: MARKET_FROM_TS,
          fromBlock: block(MARKET_FROM_TS),
          toBlock: AS_OF_BLOCK,
        })),
      );
      g2 = await compute(t.db, snapshotId, { methodVersion: '2.0.0' });
      await publishGeneration(t.db, g2);
      g3 = await compute(t.db, snapshotId); // the default: 3.0.0
      await publishGeneration(t.db, g3);
      app = await buildApi(t.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    });
    afterAll(async () => {
      await app?.close();
      await t?.close();
    });

    it("default: the table of migration 0035 holds exactly the addresses of @x402/evm (SPEC's six)", async () => {
      const rows = await t.db.selectFrom('x402_infrastructure').select('address').execute();
      expect(rows.map((r) => r.address).sort()).toEqual([...X402_INFRASTRUCTURE].sort());
    });

    it('behavior: under 3.0.0 neither contract is a seller and the market counts neither; under 2.0.0 both are', async () => {
      const sellers = async (g: number) =>
        (
          await t.db
            .selectFrom('gen_sellers')
            .select(['seller_address', 'payments_30d', 'verified_revenue_30d_micro', 'rank'])
            .where('generation', '=', g)
            .execute()
        )
          .map((r) => [r.seller_address, r.payments_30d, BigInt(r.verified_revenue_30d_micro), r.rank])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      expect(
        (
          await t.db
            .selectFrom('generations')
            .select('method_version')
            .where('generation', '=', g3)
            .executeTakeFirstOrThrow()
        ).method_version,
      ).toBe('3.0.0');
      expect(await sellers(g3)).toEqual([[S, 5, 1_500n, 1]]);
      expect(await sellers(g2)).toEqual(
        [
          [PERMIT2, 0, 0n, null],
          [COLLECTOR, 5, 5_000n, 1],
          [S, 5, 1_500n, 2],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      );
      const day = async (g: number) => {
        const r = await t.db
          .selectFrom('gen_market_daily')
          .selectAll()
          .where('generation', '=', g)
          .where('day', '=', '2025-12-10' as never)
          .executeTakeFirstOrThrow();
        return [r.payments, BigInt(r.volume_micro), r.sellers_paid, r.tracked_sellers, r.tracked_listings];
      };
      expect(await day(g3)).toEqual([5, 1_500n, 1, 1, 1]);
      expect(await day(g2)).toEqual([10, 6_500n, 2, 3, 3]);
    });

    it("behavior: the API directory, the view gen_listings and the bundle's listings.ndjson are the same rows", async () => {
      for (const g of [g2, g3]) {
        const res = await get(app, `/api/v1/sellers?generation=${g}&limit=50`);
        expect(res.status, res.text).toBe(200);
        const served = res.json.listings as Record<string, unknown>[];
        const { rows: view } = await sql<
          Record<string, unknown>
        >`select * from gen_listings where generation = ${g} order by listing_id`.execute(t.db);
        let text = '';
        for await (const chunk of bundleFileText(t.db, await readGenerationHead(t.db, g), 'listings.ndjson'))
          text += chunk.bytes.toString('utf8');
        const bundle = text
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const byId = (rows: Record<string, unknown>[]) =>
          rows.map(fields).sort((a, b) => String(a.listing_id).localeCompare(String(b.listing_id)));
        expect(byId(view), `generation ${g}: view = API`).toEqual(byId(served));
        expect(byId(bundle), `generation ${g}: bundle = API`).toEqual(byId(served));
      }
    });

    it('behavior: the rows worked out by hand: other_rail without seller or numbers under 3.0.0, sellers under 2.0.0', async () => {
      const { rows } = await sql<
        Record<string, unknown>
      >`select * from gen_listings where generation in (${g2}, ${g3}) order by generation, listing_id`.execute(t.db);
      const of = (g: number) => rows.filter((r) => r.generation === g).map(fields);
      const none = {
        tier: 'listed_only',
        evidence_state: 'not_observed',
        verified_revenue_30d_micro: null,
        median_payment_30d_micro: null,
        farm_flag: null,
        sibling_listings: 0,
      };
      const seller = {
        verifiability: 'base_usdc',
        tier: 'verified',
        evidence_state: 'verified',
        median_payment_30d_micro: '300',
        farm_flag: 0,
        sibling_listings: 1,
      };
      expect(of(g3)).toEqual([
        { listing_id: id(1), seller_address: S, ...seller, verified_revenue_30d_micro: '1500' },
        { listing_id: id(2), seller_address: null, verifiability: 'other_rail', ...none },
        { listing_id: id(3), seller_address: null, verifiability: 'other_rail', ...none },
        { listing_id: id(4), seller_address: null, verifiability: 'other_rail', ...none },
      ]);
      expect(of(g2).slice(1, 3)).toEqual([
        {
          listing_id: id(2),
          seller_address: COLLECTOR,
          ...seller,
          verified_revenue_30d_micro: '5000',
          median_payment_30d_micro: '1000',
        },
        {
          listing_id: id(3),
          seller_address: PERMIT2,
          ...seller,
          tier: 'listed_only',
          evidence_state: 'not_observed',
          verified_revenue_30d_micro: '0',
          median_payment_30d_micro: null,
        },
      ]);
      // (/meta's x402_contract_pay_to reads the same table: test/api/method3.test.ts)
    });
  },
);
