import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { openDatabase, type Database } from '../../src/db/index.ts';
import {
  buyerAccount,
  deployUsdc,
  fund,
  mine,
  settle,
  startAnvil,
  type AnvilInstance,
} from '../../src/devchain/index.ts';
import { migratedDataDir } from '../helpers/db.ts';
import { tally, usdc, writeOneSellerCatalog } from '../helpers/e2e.ts';

/**
 * Issue 12, findings 3 and 9, and issue 11's bundle boundary: bundles downloaded from the API are
 * the exported ones byte for byte and audit identical; the audit compares every constant and the
 * window of the manifest, and says when the constants are not those of the method version; a
 * malformed manifest is refused naming the field. Real anvil with Circle's USDC; embedded database.
 */
const S1 = '0x5e11e50000000000000000000000000000000001' as Address;

let anvil: AnvilInstance;
let dir: string;
let env: Record<string, string>;
let exported: string;

beforeAll(async () => {
  anvil = await startAnvil();
  const dep = await deployUsdc(anvil.url);
  for (const n of [0, 1, 2, 3, 4]) await fund(dep, buyerAccount(n).address, usdc(100));
  for (const n of [0, 1, 2, 3, 4]) await settle(dep, { from: buyerAccount(n), to: S1, value: usdc(1 + n) });
  await mine(anvil.url, 3);
  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-bundle-'));
  writeOneSellerCatalog(path.join(dir, 'catalog.json'), S1);
  env = {
    RPC_URL: anvil.url,
    CATALOG_SOURCE: path.join(dir, 'catalog.json'),
    CONFIRMATIONS: '0',
    DATA_DIR: await migratedDataDir(path.join(dir, 'data')), // from the template: not the subject here
    LOG_LEVEL: 'silent',
  };
  const run = await tally(['run'], env);
  expect(run.code, run.out).toBe(0);
  exported = path.join(dir, 'exported');
  const ex = await tally(['export', '--generation', '1', '--out', exported], env);
  expect(ex.code, ex.out).toBe(0);
});

afterAll(async () => {
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the exported bundle, for tampering. */
function copyOf(name: string): string {
  const to = path.join(dir, name);
  mkdirSync(to);
  for (const f of readdirSync(exported)) writeFileSync(path.join(to, f), readFileSync(path.join(exported, f)));
  return to;
}

describe('bundles through the API (finding 9)', () => {
  let database: Database;
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    database = await openDatabase({ dataDir: env.DATA_DIR });
    const app = await buildApi(database.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    close = async () => {
      await app.close();
      await database.close();
    };
  });
  afterAll(async () => close?.());

  it('behavior: every file of a retained generation is the exported file byte for byte, and the download audits identical', async () => {
    const downloaded = path.join(dir, 'downloaded');
    mkdirSync(downloaded);
    const manifestRes = await fetch(`${base}/api/v1/generations/1/bundle/manifest.json`);
    expect(manifestRes.status).toBe(200);
    expect(manifestRes.headers.get('cache-control')).toContain('immutable');
    const manifestText = await manifestRes.text();
    const manifest = JSON.parse(manifestText) as { files: { name: string }[] };
    const names = ['manifest.json', ...manifest.files.map((f) => f.name)];
    expect(names.sort()).toEqual(readdirSync(exported).sort());
    for (const name of names) {
      const text =
        name === 'manifest.json'
          ? manifestText
          : await (await fetch(`${base}/api/v1/generations/1/bundle/${name}`)).text();
      expect(Buffer.from(text).equals(readFileSync(path.join(exported, name))), name).toBe(true);
      writeFileSync(path.join(downloaded, name), text);
    }
    const audit = await tally(['audit', '--bundle', downloaded], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(audit.code, audit.out).toBe(0);
    expect(audit.out).toContain('identical');
  });

  it('error: an unknown file, a generation not retained, a bad number', async () => {
    expect((await fetch(`${base}/api/v1/generations/1/bundle/secrets.txt`)).status).toBe(404);
    const missing = await fetch(`${base}/api/v1/generations/99/bundle/manifest.json`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).error.code).toBe('generation_not_found');
    const bad = await fetch(`${base}/api/v1/generations/x1/bundle/manifest.json`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.message).toMatch(/^generation: /);
    expect((await fetch(`${base}/api/v1/generations/1/bundle/manifest.json`, { method: 'POST' })).status).toBe(405);
  });
});

describe('the audit compares what defines the method (finding 3)', () => {
  it('error: a manifest whose evidence_min_payers was changed from 3 to 2 is not identical, and is named as foreign to its method', async () => {
    const bundle = copyOf('tampered-constant');
    const file = path.join(bundle, 'manifest.json');
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"evidence_min_payers": 3');
    writeFileSync(file, text.replace('"evidence_min_payers": 3', '"evidence_min_payers": 2'));
    const { code, out } = await tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(code, out).toBe(1);
    expect(out).toMatch(
      /the published constants are not those method \d+\.\d+\.\d+ defines: evidence_min_payers is 2, method \S+ defines 3/,
    );
    expect(out).toContain('constant evidence_min_payers: published 2, recomputed 3');
  });

  it('error: a changed window is a difference', async () => {
    const bundle = copyOf('tampered-window');
    const file = path.join(bundle, 'manifest.json');
    const manifest = readFileSync(file, 'utf8');
    const seconds = /"seconds": (\d+)/.exec(manifest)![1]!;
    writeFileSync(file, manifest.replace(`"seconds": ${seconds}`, `"seconds": ${Number(seconds) - 1}`));
    const { code, out } = await tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });
    expect(code, out).toBe(1);
    expect(out).toContain(`window seconds: published ${Number(seconds) - 1}, recomputed ${seconds}`);
  });
});

describe('a bundle is untrusted input (issue 11)', () => {
  const audit = (bundle: string) => tally(['audit', '--bundle', bundle], { RPC_URL: anvil.url, LOG_LEVEL: 'silent' });

  it('error: a truncated manifest is refused as not JSON', async () => {
    const bundle = copyOf('truncated');
    const file = path.join(bundle, 'manifest.json');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 200));
    const { code, out } = await audit(bundle);
    expect(code).toBe(1);
    expect(out).toContain('manifest.json is not valid JSON (truncated?)');
  });

  it('error: a mistyped field is named', async () => {
    for (const [from, to, field] of [
      ['"generation": 1,', '"generation": "one",', 'generation'],
      ['"evidence_sha256": "', '"evidence_sha256": "zz', 'digests.evidence_sha256'],
      ['"rows": ', '"rows": -', 'files.0.rows'],
    ] as const) {
      const bundle = copyOf(`mistyped-${field}`);
      const file = path.join(bundle, 'manifest.json');
      const text = readFileSync(file, 'utf8');
      expect(text).toContain(from);
      writeFileSync(file, text.replace(from, to));
      const { code, out } = await audit(bundle);
      expect(code, out).toBe(1);
      expect(out).toContain(`manifest.json: ${field}: `);
      expect(out).not.toMatch(/TypeError|Cannot read/);
    }
  });

  it('error: control characters in a bundle (a constant named ESC ] 0;pwned BEL, valued C1 CSI) are printed escaped', async () => {
    const bundle = copyOf('control-characters');
    const file = path.join(bundle, 'manifest.json');
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('"evidence_min_payers": 3');
    // JSON escapes in the file; the parsed key and value hold the raw ESC, BEL and U+009B.
    writeFileSync(
      file,
      text.replace('"evidence_min_payers": 3', '"evidence_min_payers": 3, "\\u001b]0;pwned\\u0007": "\\u009b2J"'),
    );
    const { code, out } = await audit(bundle);
    expect(code, out).toBe(1);
    // The audit names the foreign constant and its difference; a terminal sees only text.
    expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    expect(out).toContain(String.raw`\x1b]0;pwned\x07 is "\x9b2J", method`);
    expect(out).toContain(String.raw`constant \x1b]0;pwned\x07: published "\x9b2J", recomputed (absent)`);
  });

  it('error: an oversized manifest is refused without being read', async () => {
    const bundle = copyOf('oversized');
    writeFileSync(path.join(bundle, 'manifest.json'), `{"pad":"${'x'.repeat(2_000_000)}"}`);
    const { code, out } = await audit(bundle);
    expect(code).toBe(1);
    expect(out).toMatch(/manifest\.json is \d+ bytes; a bundle manifest is at most 1000000/);
  });
});
