import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { chainOf } from '../../src/api/read/meta.ts';
import type { GenerationRow } from '../../src/api/read/generation.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedFixture } from './fixture.ts';
import { DocumentValidator, get } from './helpers.ts';

/**
 * /meta's `chain` (issue 23: explorer links only on the public Base mainnet): public only when the
 * operator says so (ApiOptions.publicChain, PUBLIC_CHAIN) AND the generation's chain id is 8453.
 */
describe.each(backends())('/meta chain on $backend', ({ backend }) => {
  let db: TestDatabase;
  let publicApp: FastifyInstance;
  let localApp: FastifyInstance;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    await seedFixture(db.db); // generation 1 recorded chain_id 8453 (test/api/fixture.ts)
    publicApp = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, publicChain: true });
    localApp = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, publicChain: false });
  });
  afterAll(async () => {
    await publicApp?.close();
    await localApp?.close();
    await db?.close();
  });

  it('default: a public chain with Base mainnet id has basescan as its explorer; a local one none', async () => {
    const pub = await get(publicApp, '/api/v1/meta');
    expect(pub.json.chain).toEqual({ chain_id: 8453, public: true, explorer_url: 'https://basescan.org' });
    const local = await get(localApp, '/api/v1/meta?generation=1');
    expect(local.json.chain).toEqual({ chain_id: 8453, public: false, explorer_url: null });
    const validator = new DocumentValidator((await get(publicApp, '/api/v1/openapi.json')).json);
    expect(validator.check('/api/v1/meta', 200, pub.json)).toEqual([]);
    expect(validator.check('/api/v1/meta', 200, local.json)).toEqual([]);
  });
});

describe('chainOf', () => {
  const generation = (chain_id: number) => ({ constants: { chain_id } }) as unknown as GenerationRow;

  it('behavior: another chain id is never public, whatever the operator says', () => {
    expect(chainOf(generation(84532), true)).toEqual({ chain_id: 84532, public: false, explorer_url: null });
    expect(chainOf(generation(8453), true)).toEqual({
      chain_id: 8453,
      public: true,
      explorer_url: 'https://basescan.org',
    });
    expect(chainOf(generation(8453), false)).toEqual({ chain_id: 8453, public: false, explorer_url: null });
  });
});
