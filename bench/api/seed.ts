import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { CATEGORIES, METHOD_CONSTANTS_2_0_0 } from '../../src/method/constants.ts';

/**
 * A published generation of `listings` listings (every 10th other_rail) over `sellers` sellers,
 * the first `ranked` of them ranked, written straight into the generation tables with
 * generate_series (the method is not run: the API only reads). Sellers pay in no payments table,
 * so the evidence endpoint is not benchmarked. Not idempotent: use an empty schema.
 */
export async function seedBenchGeneration(
  db: Kysely<Schema>,
  opts: { listings: number; sellers: number; ranked: number },
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const categories = sql.raw(`array[${CATEGORIES.map((c) => `'${c}'`).join(',')}]`);
  const snapshot = await db
    .insertInto('catalog_snapshots')
    .values({
      source: 'bench',
      fetched_at: new Date(),
      sha256: 'a'.repeat(64),
      items_count: opts.listings,
      listings_count: opts.listings,
      rejected_count: 0,
    })
    .returning('snapshot_id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('generations')
    .values({
      generation: 1,
      status: 'published',
      run_seq: 1,
      method_version: '1.0.0',
      generated_at: new Date(),
      published_at: new Date(),
      as_of_block: 40_000_000,
      as_of_block_hash: `0x${'e'.repeat(64)}`,
      as_of_ts: now - 60,
      window_seconds: 2_592_000,
      window_start_ts: now - 60 - 2_592_000,
      market_from_ts: now - 60 - 2_592_000 - ((now - 60) % 86_400),
      catalog_snapshot_id: snapshot.snapshot_id,
      catalog_sha256: 'c'.repeat(64),
      evidence_sha256: 'd'.repeat(64),
      constants: JSON.stringify(METHOD_CONSTANTS_2_0_0),
      sources: JSON.stringify([
        {
          name: 'catalog',
          source: 'bench',
          fetched_at: new Date().toISOString(),
          items: opts.listings,
          listings: opts.listings,
          rejected: 0,
          sha256: 'a'.repeat(64),
        },
        {
          name: 'base_usdc',
          chain_id: 8453,
          contract: METHOD_CONSTANTS_2_0_0.usdc_contract,
          indexed_to_block: 40_000_000,
          indexed_to_timestamp: new Date((now - 60) * 1000).toISOString(),
          lag_seconds: 60,
        },
      ]),
    })
    .execute();
  // generation 1's partition of gen_sellers (migration 0047), then its rows
  await sql`select gen_sellers_open(1)`.execute(db);
  await sql`select gen_sellers_close(1)`.execute(db);
  await sql`
    insert into gen_sellers
    select 1, '0x' || lpad(to_hex(i), 40, '0'), 3, 20 + i % 50, 3 + i % 20,
           (${opts.sellers}::bigint - i + 1) * 1000000 + (case when i = 1 then 9007199254740993 else 0 end),
           1000000 + i, 'verified', case when i <= ${opts.ranked} then 'verified' else 'listed_only' end, 0, null,
           case when i <= ${opts.ranked} then i end, array[(${categories})[1 + i % 11]], repeat('f', 64),
           ${now - 86_400 * 20}, ${now - 3_600}, 39000000 + i, 39900000 + i,
           null, null, null, null, null, null, null, null, null, null, null, 0
      from generate_series(1, ${opts.sellers}) as i`.execute(db);
  await sql`select gen_sellers_set_numbers(1)`.execute(db);
  await sql`
    insert into gen_listings_fixed
    select 1, encode(sha256(('listing-' || i)::bytea), 'hex'),
           case when i % 10 = 0 then null else '0x' || lpad(to_hex(1 + i % ${opts.sellers}), 40, '0') end,
           case when i % 10 = 0 then 'other_rail' else 'base_usdc' end,
           'https://seller' || i || '.example.com/api/v1/resource/' || i, 'Listing ' || i, case when i % 10 = 0 then 'solana' else 'base' end,
           'A paid resource number ' || i || ' with a description of typical length for the catalog.',
           (${categories})[1 + i % 11], case when i % 3 = 0 then 'seller_asserted' else 'auto' end,
           case when i % 10 = 0 then 'listed_only' else 'verified' end,
           case when i % 10 = 0 then 'not_observed' else 'verified' end,
           case when i % 10 = 0 then null else 123456789 + i end, case when i % 10 = 0 then null else 10000 + i end,
           case when i % 10 = 0 then null else 0 end, null, case when i % 10 = 0 then 0 else 3 end
      from generate_series(1, ${opts.listings}) as i`.execute(db);
  // The snapshot's catalog rows, the listings' text: search reads its words there (migration 0017).
  await sql`
    insert into catalog_listings (snapshot_id, listing_id, item_index, accept_index, resource_url, network,
                                  canonical_network, pay_to, asset, verifiability, seller_address, title,
                                  description, category, category_source)
    select ${snapshot.snapshot_id}, listing_id, row_number() over (order by listing_id), 0, resource_url, network,
           network, coalesce(seller_address, 'pay-' || listing_id), 'usdc', verifiability, seller_address, title,
           description, category, category_source
      from gen_listings where generation = 1`.execute(db);
  await sql`
    insert into gen_market_daily
    select 1, (current_date - d)::date, 1000 + d, 1000000000 + d, 100 + d, 50 + d, 10000 + d, ${opts.sellers}, ${opts.listings}
      from generate_series(1, 30) as d`.execute(db);
  await sql`insert into published_pointer (generation) values (1)`.execute(db);
  await sql`analyze gen_listings_fixed; analyze gen_sellers`.execute(db);
}
