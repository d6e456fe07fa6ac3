import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';
import { seedFixture } from '../api/fixture.ts';
import { get } from '../api/helpers.ts';
import { tally } from '../helpers/e2e.ts';

/**
 * Issue 12, finding 6, on real Postgres: a database that refuses connections (ALLOW_CONNECTIONS
 * false, SQLSTATE 55000) or cannot be reached is a temporary fault named as the database: `run`
 * exits 75 and `serve` answers 503 unavailable, never 500.
 */
const base = process.env.TEST_DATABASE_URL;

describe.skipIf(!base)('a database that refuses connections (Postgres)', () => {
  const name = `test_refusing_${randomBytes(4).toString('hex')}`;
  let admin: pg.Client;
  let url: string;
  let database: Database;
  let app: FastifyInstance;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const u = new URL(base!);
    u.pathname = `/${name}`;
    url = u.toString();
    database = await openDatabase({ databaseUrl: url });
    await migrate(database.db);
    await seedFixture(database.db);
    app = await buildApi(database.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    expect((await get(app, '/api/v1/rankings')).status).toBe(200);
    // Now the database stops accepting connections, and the API's open ones are cut.
    await admin.query(`alter database ${name} allow_connections false`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [name]);
  });

  afterAll(async () => {
    await app?.close();
    await database?.close().catch(() => {});
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  it('error: run exits 75 and names the database, not the RPC', async () => {
    const { code, out: text } = await tally(['run'], {
      DATABASE_URL: url,
      RPC_URL: 'http://127.0.0.1:1',
      CATALOG_SOURCE: 'x.json',
    });
    expect(code, text).toBe(75);
    expect(text).toContain(`the database postgres://${new URL(url).host}/… is not reachable right now`);
    expect(text).toContain('not currently accepting connections');
  });

  it('error: serve answers an uncached URL with 503 unavailable, not 500', async () => {
    const res = await get(app, '/api/v1/sellers?limit=3');
    expect(res.status).toBe(503);
    expect(res.json.error.code).toBe('unavailable');
  });

  it('error: a refused connection is named as the database (exit 75)', async () => {
    const { code, out: text } = await tally(['run'], {
      DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:1/x',
      RPC_URL: 'http://127.0.0.1:2',
    });
    expect(code, text).toBe(75);
    expect(text).toContain('the database postgres://127.0.0.1:1/… is not reachable right now');
    expect(text).not.toContain(':pw@');
  });

  it('error: an unknown database is a configuration error naming DATABASE_URL (exit 1)', async () => {
    const u = new URL(base!);
    u.pathname = '/no_such_database_here';
    const { code, out: text } = await tally(['run'], { DATABASE_URL: u.toString(), RPC_URL: 'http://127.0.0.1:2' });
    expect(code, text).toBe(1);
    expect(text).toContain('refused the connection');
    expect(text).toContain('check DATABASE_URL');
  });
});
