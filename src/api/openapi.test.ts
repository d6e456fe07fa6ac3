import { describe, expect, it } from 'vitest';
import { openApiDocument } from './openapi.ts';

const doc = openApiDocument() as any;
const schemas = doc.components.schemas;

/** The JSON types a property schema admits (following anyOf and nullable type arrays). */
function types(s: any): string[] {
  if (s.$ref) return types(schemas[s.$ref.split('/').pop()]);
  if (s.anyOf) return s.anyOf.flatMap(types).sort();
  return (Array.isArray(s.type) ? s.type : [s.type]).sort();
}

describe('openApiDocument', () => {
  it('default: OpenAPI 3.1.0, info.version 1.0.0, the snapshot paths, the bundle files and the two documentation paths', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/directory',
      '/api/v1/docs',
      '/api/v1/generations/{generation}/bundle/{file}',
      '/api/v1/market/daily',
      '/api/v1/market/summary',
      '/api/v1/meta',
      '/api/v1/openapi.json',
      '/api/v1/operators',
      '/api/v1/operators/{id}',
      '/api/v1/rankings',
      '/api/v1/sellers',
      '/api/v1/sellers/{slug}',
      '/api/v1/sellers/{slug}/daily',
      '/api/v1/sellers/{slug}/payments',
      '/api/v1/sellers/{slug}/periods',
    ]);
  });

  it('behavior: a listing row has exactly the contract fields and types (SPEC 4)', () => {
    // The table of SPEC section 4, written out by hand.
    const contract: Record<string, string[]> = {
      listing_id: ['string'],
      seller_address: ['null', 'string'],
      verifiability: ['string'],
      resource_url: ['string'],
      title: ['null', 'string'],
      network: ['string'],
      description: ['null', 'string'],
      category: ['string'],
      category_source: ['string'],
      tier: ['string'],
      evidence_state: ['string'],
      verified_revenue_30d_micro: ['integer', 'null'],
      median_payment_30d_micro: ['integer', 'null'],
      farm_flag: ['integer', 'null'],
      farm_reasons: ['null', 'string'],
      sibling_listings: ['integer'],
    };
    const row = schemas.ListingRow;
    expect(Object.keys(row.properties)).toEqual(Object.keys(contract));
    expect(row.required).toEqual(Object.keys(contract));
    expect(row.additionalProperties).toBe(false);
    for (const [field, expected] of Object.entries(contract))
      expect(types(row.properties[field]), field).toEqual(expected);
    expect(row.properties.farm_flag.anyOf[0].enum).toEqual([0, 1]);
    expect(row.properties.verifiability.enum).toEqual(['base_usdc', 'other_rail']);
    expect(schemas.Category.enum).toHaveLength(11);
  });

  it('behavior: money is a JSON integer with minimum 0, never a string', () => {
    for (const [name, field] of [
      ['RankingRow', 'verified_revenue_30d_micro'],
      ['PaymentRow', 'value_micro'],
      ['MarketDay', 'volume_micro'],
    ] as const) {
      expect(schemas[name].properties[field], `${name}.${field}`).toMatchObject({ type: 'integer', minimum: 0 });
    }
  });

  it('args: the directory limit is documented as 1..50 and the rankings limit as 1..500', () => {
    const limit = (path: string) =>
      doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'limit').schema;
    expect(limit('/api/v1/sellers')).toEqual({ type: 'integer', minimum: 1, maximum: 50 });
    expect(limit('/api/v1/rankings')).toEqual({ type: 'integer', minimum: 1, maximum: 500 });
  });

  it('behavior: every property of every response schema says what it means', () => {
    const missing: string[] = [];
    const walk = (schema: any, where: string) => {
      for (const [name, p] of Object.entries<any>(schema?.properties ?? {})) {
        if (typeof p.description !== 'string' || p.description.length < 12) missing.push(`${where}.${name}`);
        walk(p, `${where}.${name}`);
      }
      if (schema?.items) walk(schema.items, `${where}[]`);
      for (const s of [...(schema?.anyOf ?? []), ...(schema?.oneOf ?? [])]) walk(s, where);
    };
    for (const [id, schema] of Object.entries<any>(schemas)) walk(schema, id);
    expect(missing).toEqual([]);
    // the fields a newcomer asks about, explained (docs/METHOD.md)
    expect(schemas.ListingRow.properties.evidence_state.description).toMatch(/insufficient: some payments, but fewer/);
    expect(schemas.ListingRow.properties.tier.description).toMatch(/listed_only/);
    expect(schemas.ListingRow.properties.verifiability.description).toMatch(/other_rail/);
    expect(schemas.ListingRow.properties.farm_flag.description).toMatch(/farm/);
    expect(schemas.ListingRow.properties.sibling_listings.description).toMatch(/same seller/);
    expect(schemas.ListingRow.properties.category_source.description).toMatch(/seller_asserted/);
    expect(schemas.MarketDay.properties.tracked_sellers.description).toMatch(/sellers of the catalog/);
  });
});
