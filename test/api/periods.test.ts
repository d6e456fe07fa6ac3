import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { publishGeneration } from '../../src/publish/index.ts';
import { backends, freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { AS_OF_TS, DEC_10, S } from '../method/fixture.ts';
import { compute, loadFixture } from '../method/setup.ts';
import { SOURCES } from './fixture.ts';
import { DocumentValidator, get } from './helpers.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe.each(backends())('seller periods of a 2.0.0 generation on $backend', ({ backend }) => {
  let db: TestDatabase;
  let app: FastifyInstance;
  let validator: DocumentValidator;
  let lines: { hour: bigint; line: string }[];

  beforeAll(async () => {
    db = await freshDatabase(backend);
    const fixture = await loadFixture(db.db);
    lines = fixture.transfers
      .filter((t) => t.counted && t.to === S.A)
      .map((t) => ({ hour: t.ts - (t.ts % 3600n), line: `${t.tx}:${t.logIndex}:${t.from}:${t.to}:${t.value}\n` }));
    // sources as the publisher records them (/meta validates them)
    await publishGeneration(
      db.db,
      await compute(db.db, fixture.snapshotId, { sources: SOURCES, methodVersion: '2.0.0' }),
    );
    app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    validator = new DocumentValidator((await get(app, '/api/v1/openapi.json')).json);
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it('default: the provenance links to the periods, whose lines compose the seller digest', async () => {
    const profile = await get(app, `/api/v1/sellers/${S.A}`);
    const provenance = profile.json.metrics.payments_30d.provenance;
    expect(provenance.evidence_periods).toBe(`/api/v1/sellers/${S.A}/periods?generation=1`);
    const res = await get(app, provenance.evidence_periods);
    expect(validator.check('/api/v1/sellers/{slug}/periods', res.status, res.json)).toEqual([]);
    // A's five payments from 2025-12-10T06:00Z, and its one at as_of_ts (2026-01-01T12:00:00Z)
    const hour1 = lines
      .filter((l) => l.hour === DEC_10 + 21_600n)
      .map((l) => l.line)
      .sort();
    const hour2 = lines.filter((l) => l.hour === AS_OF_TS).map((l) => l.line);
    expect(hour1).toHaveLength(5);
    expect(res.json.periods).toEqual([
      {
        period_start: '2025-12-10T06:00:00.000Z',
        period_start_unix: 1765346400,
        payments: 5,
        sha256: sha256(hour1.join('')),
      },
      {
        period_start: '2026-01-01T12:00:00.000Z',
        period_start_unix: 1767268800,
        payments: 1,
        sha256: sha256(hour2.join('')),
      },
    ]);
    expect(res.json).toMatchObject({
      method_version: '2.0.0',
      digest_period_seconds: 3600,
      evidence_sha256: provenance.evidence_sha256,
    });
    const composed = res.json.periods
      .map(
        (p: { period_start_unix: number; payments: number; sha256: string }) =>
          `${p.period_start_unix}:${p.payments}:${p.sha256}\n`,
      )
      .join('');
    expect(sha256(composed)).toBe(provenance.evidence_sha256);
  });

  it('default: /meta of a 2.0.0 generation serves its method version and digest_period_seconds', async () => {
    const res = await get(app, '/api/v1/meta');
    expect(validator.check('/api/v1/meta', res.status, res.json)).toEqual([]);
    expect(res.status, res.text).toBe(200);
    expect(res.json.method_version).toBe('2.0.0');
    expect(res.json.constants.digest_period_seconds).toBe(3600);
  });

  it('error: an unknown seller is a 404 seller_not_found', async () => {
    const res = await get(app, `/api/v1/sellers/0x${'99'.repeat(20)}/periods`);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('seller_not_found');
  });
});
