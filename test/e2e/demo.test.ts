import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/command.ts';
import { silentLogger } from '../../src/lib/log.ts';

describe('demo (what npm start runs)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tally-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('default: with no configuration it serves a populated API, and stops on the signal', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const progress: string[] = [];
    let base = '';
    let listened!: () => void;
    const listening = new Promise<void>((resolve) => (listened = resolve));
    const exit = runCommand(
      ['demo', '--port', '0'],
      { DATA_DIR: dir },
      {
        out: (l) => out.push(l),
        err: (l) => out.push(l),
        log: silentLogger,
        progress: (line) => progress.push(line),
        signal: stop.signal,
        onListening: (url) => {
          base = url;
          listened();
        },
      },
    );
    await Promise.race([
      listening,
      exit.then((code) => {
        throw new Error(`demo exited ${code}: ${out.join('\n')}`);
      }),
    ]);

    const meta = (await (await fetch(`${base}/api/v1/meta`)).json()) as {
      generation: number;
      sources: { name: string; items?: number }[];
      cadence: { interval_seconds: number };
      freshness: { stale: boolean };
    };
    expect(meta.generation).toBe(1);
    // The demo computes method 3.0.0 (every settlement class; src/cli/demo.ts).
    expect((meta as unknown as { method_version: string }).method_version).toBe('3.0.0');
    // The demo keeps running every 60 s, and says so; its generation is fresh.
    expect(meta.cadence.interval_seconds).toBe(60);
    expect(meta.freshness.stale).toBe(false);
    // The seeding shows its progress, up to every block of the history.
    expect(progress.some((l) => /^seeding the demo chain \[#+\.*\] \d+\/\d+ blocks, ETA/.test(l))).toBe(true);
    expect(progress.filter((l) => l.startsWith('seeding')).at(-1)).toMatch(/\[#{20}\] (\d+)\/\1 blocks/);
    const printed = out.join('\n');
    for (const line of [
      `web page        ${base}/`,
      `API docs        ${base}/api/v1/docs`,
      'chain (RPC_URL) http://127.0.0.1:',
      'data folder     ',
    ]) {
      expect(printed).toContain(line);
    }
    // The audit command names the bin by an absolute path that exists: it runs from any folder.
    const bin = / node (\S+) audit --bundle \.\/g/.exec(printed)?.[1];
    expect(bin && path.isAbsolute(bin) && existsSync(bin), printed).toBe(true);
    expect(printed).not.toContain('npx x402-tally');
    // The real crawl's 1,400 items plus the demo's synthetic farm of 55 and its 6 sellers paid
    // through x402's other schemes and internal payments (src/devchain/x402-economy.ts).
    expect(meta.sources.find((s) => s.name === 'catalog')?.items).toBe(1400 + 55 + 6);
    // The farm: 55 listings of one seller, flagged by the listing rule.
    const farm = (await (await fetch(`${base}/api/v1/sellers/0xFA44fa44fa44fa44fa44fa44fa44fa44fa44fa44`)).json()) as {
      listing_count: number;
      farm_reasons: string | null;
    };
    expect(farm).toMatchObject({ listing_count: 55, farm_reasons: '["listing_count>50"]' });
    const rankings = (await (await fetch(`${base}/api/v1/rankings?limit=5`)).json()) as {
      rankings: { rank: number; verified_revenue_30d_micro: number }[];
    };
    expect(rankings.rankings.length).toBeGreaterThan(0);
    expect(rankings.rankings[0]!.rank).toBe(1);
    expect(rankings.rankings[0]!.verified_revenue_30d_micro).toBeGreaterThan(0);
    expect(out.join('\n')).toContain(`${base}/api/v1/rankings`);

    stop.abort();
    expect(await exit).toBe(0);
  });
});
