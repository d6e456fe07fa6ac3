import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../helpers/db.ts';
import { tally } from '../helpers/e2e.ts';

/** Issue 12, finding 8: export (and the other reading commands) on a database that is not there or not migrated. */

const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading commands on a missing or unmigrated database', () => {
  it('error: export with no embedded database says so and creates nothing', async () => {
    const dataDir = path.join(dir, 'nothing-here');
    const { code, out: text } = await tally(['export', '--generation', '1', '--out', path.join(dir, 'out')], {
      DATA_DIR: dataDir,
    });
    expect(code).toBe(1);
    expect(text).toContain(`there is no embedded database in ${dataDir}: run \`x402-tally run\``);
    expect(existsSync(dataDir)).toBe(false);
    expect(existsSync(path.join(dir, 'out'))).toBe(false);
  });

  it('error: serve and audit --generation with no embedded database say so and create nothing', async () => {
    const dataDir = path.join(dir, 'still-nothing');
    for (const argv of [['serve'], ['audit', '--generation', '1', '--rpc-url', 'http://127.0.0.1:1']]) {
      const { code, out: text } = await tally(argv, { DATA_DIR: dataDir });
      expect(code, text).toBe(1);
      expect(text).toContain('there is no embedded database');
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'error: export on an unmigrated Postgres names the schema as behind, like serve',
    async () => {
      const database = await freshDatabase('pg', { migrate: false });
      try {
        const out = path.join(dir, 'pg-out');
        const { code, out: text } = await tally(['export', '--generation', '1', '--out', out], {
          DATABASE_URL: database.url!,
        });
        expect(code).toBe(1);
        expect(text).toMatch(/the database schema is at version 0 but this code needs \d+/);
        expect(text).toContain('run `x402-tally migrate`');
        expect(existsSync(out) && readdirSync(out).length > 0).toBe(false);
      } finally {
        await database.close();
      }
    },
  );
});
