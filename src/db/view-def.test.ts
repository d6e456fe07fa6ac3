import { describe, expect, it } from 'vitest';
import { normaliseViewDef } from './view-def.ts';

// verified_transfers (migration 0016) as pg_get_viewdef(oid, true) prints it on each version
const PG15 = ` SELECT t.tx_hash,
    t.from_address AS payer,
    t.value
   FROM usdc_transfers t
  WHERE t.from_address <> t.to_address AND t.value > 0::numeric AND t.authorized;`;
const PG17 = ` SELECT tx_hash,
    from_address AS payer,
    value
   FROM usdc_transfers t
  WHERE from_address <> to_address AND value > 0::numeric AND authorized;`;

describe('normaliseViewDef', () => {
  it('default: a single-table view prints the same from Postgres 15 and 17', () => {
    expect(normaliseViewDef(PG15)).toBe(PG17);
    expect(normaliseViewDef(PG17)).toBe(PG17);
  });

  it('behavior: a table without alias, names inside function calls, literals and subqueries', () => {
    const def = ` SELECT generations.generation,
    COALESCE(generations.run_seq, 0::bigint) AS seq,
    'generations.x'::text AS label,
    ( SELECT count(*) AS count
           FROM part_hours h
          WHERE h.gen_from <= generations.generation) AS hours
   FROM generations
  WHERE EXTRACT(epoch FROM generations.generated_at) > 0::numeric;`;
    expect(normaliseViewDef(def)).toBe(` SELECT generation,
    COALESCE(run_seq, 0::bigint) AS seq,
    'generations.x'::text AS label,
    ( SELECT count(*) AS count
           FROM part_hours h
          WHERE h.gen_from <= generations.generation) AS hours
   FROM generations
  WHERE EXTRACT(epoch FROM generated_at) > 0::numeric;`);
  });

  it('behavior: joins and unions print qualified on every version, and stay so', () => {
    const join = ` SELECT g.generation,
    r.day
   FROM generations g
     JOIN seller_daily_rows r ON r.gen_from <= g.generation;`;
    const union = ` SELECT e.generation
   FROM gen_edge_periods e
UNION ALL
 SELECT h.gen_from AS generation
   FROM part_hours h;`;
    expect(normaliseViewDef(join)).toBe(join);
    expect(normaliseViewDef(union)).toBe(union);
  });
});
