import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { publishGeneration } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { loadGroups, P, S, stepsBefore0038 } from '../method/fixture-groups.ts';
import { compute } from '../method/setup.ts';
import { SOURCES } from './fixture.ts';
import { DocumentValidator, get } from './helpers.ts';

/**
 * /api/v1/operators, /api/v1/operators/{id}, /api/v1/market/summary and the profile's
 * operator_group, over the economy of test/method/fixture-groups.ts (numbers worked out by hand
 * in test/method/groups.test.ts): generation 1 as computed before migration 0038 (none of these
 * outputs), generation 2 (3.0.0) and generation 3 (2.0.0) with them.
 */
const GROUP = `op_${'a'.repeat(40)}`;

describe.each(backends())('operator groups and the market summary over the API on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let validator: DocumentValidator;
  const checked = async (url: string, template: string) => {
    const res = await get(app, url);
    expect(validator.check(template, res.status, res.json)).toEqual([]);
    return res;
  };

  beforeAll(async () => {
    db = await freshDatabase(backend);
    const snapshotId = await loadGroups(db.db);
    const options = { sources: SOURCES, methodVersion: '3.0.0' };
    await publishGeneration(db.db, await compute(db.db, snapshotId, { ...options, steps: stepsBefore0038('3.0.0') }));
    await publishGeneration(db.db, await compute(db.db, snapshotId, options));
    await publishGeneration(db.db, await compute(db.db, snapshotId, { ...options, methodVersion: '2.0.0' }));
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    validator = new DocumentValidator((await get(app, '/api/v1/openapi.json')).json);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const group = (external: bigint | null) => ({
    id: GROUP,
    seller_count: 3,
    sellers: [S.A, S.B, S.C],
    hosts: ['h1.example', 'h2.example'],
    payments_30d: 6,
    payers_30d: 4,
    verified_revenue_30d_micro: 700,
    external_revenue_30d_micro: external === null ? null : Number(external),
  });

  it('default: the groups of a 3.0.0 and a 2.0.0 generation, one page', async () => {
    const g2 = await checked('/api/v1/operators?generation=2', '/api/v1/operators');
    expect(g2.status).toBe(200);
    expect(g2.json).toEqual({
      count: 1,
      next_cursor: null,
      generation: 2,
      method_version: '3.0.0',
      computed: true,
      groups: [group(660n)],
    });
    const g3 = await checked('/api/v1/operators', '/api/v1/operators');
    expect(g3.json.generation).toBe(3);
    expect(g3.json.groups).toEqual([group(null)]);
  });

  it('default: one group with its members, the id case-insensitive', async () => {
    const res = await checked(
      `/api/v1/operators/${GROUP.toUpperCase().replace('OP_', 'op_')}?generation=2`,
      '/api/v1/operators/{id}',
    );
    expect(res.status).toBe(200);
    expect(res.json.members.map((m: { seller_address: string }) => m.seller_address)).toEqual([S.A, S.B, S.C]);
    // A: p1 100 + p1 50 + B 40 (same_operator under 3.0.0: not external)
    expect(res.json.members[0]).toMatchObject({
      payments_30d: 3,
      payers_30d: 2,
      verified_revenue_30d_micro: 190,
      external_revenue_30d_micro: 150,
    });
  });

  it('behavior: the profile names its group, or null', async () => {
    expect((await checked(`/api/v1/sellers/${S.B}?generation=2`, '/api/v1/sellers/{slug}')).json.operator_group).toBe(
      GROUP,
    );
    expect(
      (await checked(`/api/v1/sellers/${S.D}?generation=2`, '/api/v1/sellers/{slug}')).json.operator_group,
    ).toBeNull();
    expect(
      (await checked(`/api/v1/sellers/${S.B}?generation=1`, '/api/v1/sellers/{slug}')).json.operator_group,
    ).toBeNull();
  });

  it('behavior: the directory rows name the same group, or null', async () => {
    const rows = async (generation: number) =>
      new Map(
        (await checked(`/api/v1/directory?generation=${generation}&limit=100`, '/api/v1/directory')).json.sellers.map(
          (s: { seller_address: string; operator_group: string | null }) => [s.seller_address, s.operator_group],
        ),
      );
    const g2 = await rows(2);
    expect([S.A, S.B, S.C].map((a) => g2.get(a))).toEqual([GROUP, GROUP, GROUP]);
    expect(g2.get(S.D)).toBeNull();
    // generation 1 was computed without the step: no seller has a group there
    expect([...(await rows(1)).values()].every((v) => v === null)).toBe(true);
  });

  it('default: the market summary and its change', async () => {
    const res = await checked('/api/v1/market/summary?generation=2', '/api/v1/market/summary');
    expect(res.json).toEqual({
      generation: 2,
      method_version: '3.0.0',
      computed: true,
      periods: {
        last_7d: {
          first_day: '2025-12-25',
          last_day: '2025-12-31',
          days: 7,
          payments: 5,
          volume_micro: 1347,
          external_volume_micro: 1307,
          payers: 3,
          sellers_paid: 4,
        },
        prev_7d: {
          first_day: '2025-12-18',
          last_day: '2025-12-24',
          days: 7,
          payments: 2,
          volume_micro: 350,
          external_volume_micro: 350,
          payers: 2,
          sellers_paid: 2,
        },
        last_30d: {
          first_day: '2025-12-02',
          last_day: '2025-12-31',
          days: 30,
          payments: 8,
          volume_micro: 1707,
          external_volume_micro: 1667,
          payers: 4,
          sellers_paid: 5,
        },
      },
      change: { payments: 1.5, volume: 2.848571, external_volume: 2.734286, payers: 0.5, sellers_paid: 1 },
    });
    const v2 = await checked('/api/v1/market/summary?generation=3', '/api/v1/market/summary');
    expect(v2.json.periods.last_7d.external_volume_micro).toBeNull();
    expect(v2.json.change.external_volume).toBeNull();
    expect(v2.json.change.volume).toBe(2.848571);
  });

  it('behavior: a generation computed before the outputs existed says so', async () => {
    const ops = await checked('/api/v1/operators?generation=1', '/api/v1/operators');
    expect(ops.json).toMatchObject({ computed: false, count: 0, groups: [] });
    const one = await checked(`/api/v1/operators/${GROUP}?generation=1`, '/api/v1/operators/{id}');
    expect(one.status).toBe(404);
    expect(one.json.error.code).toBe('operator_not_found');
    expect(one.json.error.message).toContain('computed before operator groups existed');
    const sum = await checked('/api/v1/market/summary?generation=1', '/api/v1/market/summary');
    expect(sum.json).toEqual({
      generation: 1,
      method_version: '3.0.0',
      computed: false,
      periods: { last_7d: null, prev_7d: null, last_30d: null },
      change: { payments: null, volume: null, external_volume: null, payers: null, sellers_paid: null },
    });
  });

  it('failure: a bad id or cursor is a 400 naming it; an unknown group a 404', async () => {
    const bad = await checked('/api/v1/operators/op_123', '/api/v1/operators/{id}');
    expect([bad.status, bad.json.error.message]).toEqual([400, expect.stringMatching(/^id: /)]);
    const cursor = await checked(`/api/v1/operators?cursor=${'0'.repeat(64)}`, '/api/v1/operators');
    expect([cursor.status, cursor.json.error.code]).toEqual([400, 'invalid_cursor']);
    const none = await checked(`/api/v1/operators/op_${P.p1.slice(2)}`, '/api/v1/operators/{id}');
    expect([none.status, none.json.error.code]).toEqual([404, 'operator_not_found']);
  });
});
