import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/index.ts';
import { migrate } from '../../src/db/migrate.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { freePort } from '../../bench/api/load.ts';
import { createStandbyPair, standbyPrerequisites, type StandbyPair } from '../../scripts/standby/clusters.ts';
import { insertChainAndCatalog, insertGeneration, publishGeneration } from '../api/fixture.ts';

// The API on a physical streaming standby (issue 24, part 3; docs/operations.md "Serving from a
// standby"): its own primary and standby clusters on 5451 and 5452, `serve` on the standby through
// a SELECT-only role. Needs root and the Debian PostgreSQL tools; skipped, saying which, without.
const missing = standbyPrerequisites();
if (missing) console.warn(`test/e2e/standby.test.ts skipped: ${missing}`);

const READER = 'tally_reader';
// Listings added to generation 3, so that its listings.ndjson (about 20 MB) outlasts the socket
// buffers and its COPY is held open by a client that stops reading.
const EXTRA_LISTINGS = 40_000;

interface Answer {
  status: number;
  generation?: number;
}

/** GET on a connection of its own; the generation of a JSON answer. */
function get(url: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => {
          let generation: number | undefined;
          try {
            generation = (JSON.parse(text) as { generation?: number }).generation;
          } catch {
            generation = undefined;
          }
          resolve({ status: res.statusCode ?? 0, generation });
        });
      })
      .on('error', reject);
  });
}

/**
 * Polls `check` until it is true and returns how long that took (ms, to print, never to assert).
 * The deadline is a bound on a hang, not a speed claim: generous for a loaded 2-core machine, and
 * under the suite's 240 s a test (vitest.config.ts) so that the error names what was waited for.
 */
const UNTIL_MS = 120_000;
async function until(what: string, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check().catch(() => false)) return performance.now() - start;
    if (performance.now() - start > UNTIL_MS) throw new Error(`${what}: not within ${UNTIL_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(missing !== null)('the API on a streaming standby', () => {
  let pair: StandbyPair | undefined;
  let primary: Database | undefined;
  let standby: Database | undefined;
  let serve: ChildProcess | undefined;
  let api = '';
  let snapshotId = 0n;
  const serveErr: string[] = [];

  beforeAll(async () => {
    // No streaming delay: replay asks a conflicting standby query to cancel at once.
    pair = await createStandbyPair({
      name: 'tally_standby_test',
      primaryPort: 5451,
      standbyPort: 5452,
      standbySettings: { max_standby_streaming_delay: '0', hot_standby_feedback: 'off' },
    });
    primary = await openDatabase({ databaseUrl: pair.primaryUrl, maxConnections: 2 });
    await migrate(primary.db);
    snapshotId = await insertChainAndCatalog(primary.db);
    await publishGeneration(primary.db, snapshotId, 1);
    await sql
      .raw(
        `create role ${READER} login; grant usage on schema public to ${READER}; grant select on all tables in schema public to ${READER}`,
      )
      .execute(primary.db);
    standby = await openDatabase({ databaseUrl: pair.standbyUrl, maxConnections: 2 });
    // The role and generation 1 reach the standby by replay, like everything else.
    await until(
      'generation 1 on the standby',
      async () =>
        (await sql<{ n: number }>`select count(*)::int as n from published_pointer`.execute(standby!.db)).rows[0]!.n ===
        1,
    );

    const port = await freePort();
    const reader = new URL(pair.standbyUrl);
    reader.username = READER;
    serve = spawn(process.execPath, [path.join(projectRoot, 'bin/x402-tally.js'), 'serve', '--port', String(port)], {
      env: { ...process.env, DATABASE_URL: reader.toString(), LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    readline.createInterface({ input: serve.stderr! }).on('line', (l) => serveErr.push(l));
    api = await new Promise<string>((resolve, reject) => {
      serve!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${serveErr.join('\n')}`)));
      readline.createInterface({ input: serve!.stdout! }).on('line', (l) => {
        const m = /serving (http:\/\/\S+)\/api\/v1\/meta/.exec(l);
        if (m) resolve(m[1]!);
      });
    });
  });

  afterAll(async () => {
    if (serve && serve.exitCode === null) {
      const exited = new Promise((r) => serve!.once('exit', r));
      serve.kill('SIGTERM');
      await exited;
    }
    await standby?.close().catch(() => {});
    await primary?.close().catch(() => {});
    pair?.drop();
  });

  it('default: serve on the standby answers through a SELECT-only role', async () => {
    expect(await sql<{ r: boolean }>`select pg_is_in_recovery() as r`.execute(standby!.db)).toMatchObject({
      rows: [{ r: true }],
    });
    expect(await get(`${api}/api/v1/meta`)).toEqual({ status: 200, generation: 1 });
    expect(await get(`${api}/api/v1/rankings`)).toEqual({ status: 200, generation: 1 });
  });

  it('behavior: a generation published on the primary is served from the standby', async () => {
    await publishGeneration(primary!.db, snapshotId, 2, ' (2)');
    // How soon is printed, not asserted: a wall-clock limit would fail on a loaded machine.
    const took = await until(
      'generation 2 served from the standby',
      async () => (await get(`${api}/api/v1/meta`)).generation === 2,
    );
    console.warn(`generation 2 served from the standby ${Math.round(took)} ms after its publish`);
    expect(await get(`${api}/api/v1/sellers`)).toEqual({ status: 200, generation: 2 });
  });

  it('behavior: with the primary stopped the standby serves the last good generation; then it follows again', async () => {
    pair!.stopPrimary();
    try {
      for (const u of ['/api/v1/meta', '/api/v1/sellers', '/api/v1/rankings', '/api/v1/market/daily'])
        expect(await get(`${api}${u}`), u).toEqual({ status: 200, generation: 2 });
      // A URL not cached yet: read from the standby now, with no primary.
      expect(await get(`${api}/api/v1/sellers?limit=3`)).toEqual({ status: 200, generation: 2 });
    } finally {
      pair!.startPrimary();
    }
    await primary!.close();
    primary = await openDatabase({ databaseUrl: pair!.primaryUrl, maxConnections: 2 });
    // Generation 3 with many listings (the next test downloads them).
    await primary.db.transaction().execute(async (trx) => {
      await insertGeneration(trx, snapshotId, 3, 'published', ' (3)');
      await sql`
        insert into gen_listings_fixed
        select 3, encode(sha256(('standby-' || i)::bytea), 'hex'), null, 'other_rail',
               'https://seller' || i || '.example.com/api/v1/resource/' || i, 'Listing ' || i, 'solana',
               'A paid resource number ' || i || ' with a description of typical length for the catalog, and more.',
               'inference', 'auto', 'listed_only', 'not_observed', null, null, null, null, 0
          from generate_series(1, ${EXTRA_LISTINGS}) as i`.execute(trx);
      await trx.updateTable('published_pointer').set({ generation: 3 }).execute();
    });
    await until(
      'generation 3 served from the standby after the primary restarted',
      async () => (await get(`${api}/api/v1/meta`)).generation === 3,
    );
  });

  it('error: replay cancelling a bundle download (one COPY) ends that download short; serve keeps serving', async () => {
    // A client that reads the first bytes of a bundle file, then stops reading: the server stops
    // reading its COPY, and the standby's backend blocks sending it (wait event ClientWrite),
    // its statement open and its snapshot held.
    const url = `${api}/api/v1/generations/3/bundle/listings.ndjson`;
    // The manifest first: the API builds the bundle's digests (a COPY of each file) on the first
    // request of a generation's bundle, and only the held download's COPY must run below.
    expect(await get(`${api}/api/v1/generations/3/bundle/manifest.json`)).toEqual({ status: 200, generation: 3 });
    let held: http.IncomingMessage | undefined;
    let got = 0;
    const download = new Promise<{ status: number; complete: boolean; got: number; length: number }>((resolve) => {
      const done = () =>
        resolve({
          status: held?.statusCode ?? 0,
          complete: held?.complete ?? false,
          got,
          length: Number(held?.headers['content-length']),
        });
      http
        .get(url, { agent: false }, (res) => {
          held = res;
          res.on('data', (c: Buffer) => (got += c.length));
          res.pause();
          res.on('end', done).on('error', done).on('aborted', done);
        })
        .on('error', done);
    });
    const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(standby!.db)).rows[0]!.n;
    const conflicts = () =>
      count(
        sql<{ n: number }>`select confl_snapshot::int as n from pg_stat_database_conflicts where datname = 'tally'`,
      );
    await until(
      'the bundle COPY blocked on its client, on the standby',
      async () =>
        held !== undefined &&
        (await count(sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where usename = ${READER} and state = 'active' and query like 'copy (%' and wait_event = 'ClientWrite'`)) ===
          1,
    );

    // Rows deleted and vacuumed away on the primary: replaying the cleanup conflicts with every
    // standby snapshot older than the delete, the COPY's among them. With
    // max_standby_streaming_delay 0 replay asks the backend to cancel at once, and waits for it.
    await sql`create table conflict_bait (x int)`.execute(primary!.db);
    await sql`insert into conflict_bait select generate_series(1, 1000)`.execute(primary!.db);
    await sql`delete from conflict_bait`.execute(primary!.db);
    await sql`vacuum conflict_bait`.execute(primary!.db);
    // The primary's WAL position after the vacuum: once the standby has received past it but not
    // replayed it, replay is stopped at the conflict (a blocked backend takes its cancel only
    // when it runs again; replay asks every 5 ms).
    const after = (await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary!.db)).rows[0]!
      .lsn;
    // Either replay cancelled the COPY already (counted in pg_stat_database_conflicts), or it is
    // stopped at the conflict, waiting for the blocked backend to take its cancel (seen on five
    // polls in a row: replay that is merely behind moves on).
    let stopped = 0;
    await until('replay cancelling the COPY, or stopped at the conflict with it', async () => {
      const n = await count(sql<{ n: number }>`select (pg_last_wal_receive_lsn() >= ${after}::pg_lsn
          and pg_last_wal_replay_lsn() < ${after}::pg_lsn)::int as n`);
      stopped = n === 1 ? stopped + 1 : 0;
      return stopped >= 5 || (await conflicts()) >= 1;
    });

    // The client reads on: the backend sees its cancel at its next row, and the download ends
    // short of its Content-Length (no file that looks complete).
    held!.resume();
    const cut = await download;
    expect(cut).toMatchObject({ status: 200, complete: false });
    expect(cut.got).toBeLessThan(cut.length);
    expect(await conflicts()).toBeGreaterThanOrEqual(1);
    // serve is alive, answers, and the same download again is whole.
    expect(serve!.exitCode).toBeNull();
    expect(await get(`${api}/api/v1/meta`)).toEqual({ status: 200, generation: 3 });
    const again = await new Promise<{ complete: boolean; got: number; length: number }>((resolve, reject) => {
      http
        .get(url, { agent: false }, (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () =>
            resolve({ complete: res.complete, got: n, length: Number(res.headers['content-length']) }),
          );
        })
        .on('error', reject);
    });
    expect(again.complete).toBe(true);
    expect(again.got).toBe(again.length);
    expect(again.length).toBe(cut.length);
  });
});
