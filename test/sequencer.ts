import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the longest files first. Two workers share ~110 files whose times range from 0 to 80 s:
 * a long file started last runs alone at the end while the other worker idles (vitest's own order,
 * without its cache of past durations as in a clean CI checkout, is by file size, which put
 * test/method/partitions.test.ts, 80 s, among the last). The order is all this changes: what runs,
 * and where, is vitest's.
 *
 * A file's expected duration is vitest's cached one when this checkout has run it, else the
 * figure below, else 0 (and vitest's order among those). The figures are seconds, from a clean
 * clone's CI run on a quiet machine (2026-11-27, docs/benchmarks.md, "The suite's time"); only
 * their order matters, and a file missing from them only starts later.
 */
const SECONDS: Record<string, number> = {
  'test/method/partitions.test.ts': 80,
  'test/e2e/demo-x402.test.ts': 73,
  'test/api/search.test.ts': 59,
  'test/method/incremental3.test.ts': 45,
  'test/web/people.test.ts': 39,
  'test/e2e/run-audit.test.ts': 38,
  'test/e2e/upgrade-3.test.ts': 35,
  'test/e2e/compact-migration.test.ts': 34,
  'test/method/incremental.test.ts': 30,
  'test/method/cold.test.ts': 29,
  'test/fuzz/params.test.ts': 26,
  'test/cli/bin.test.ts': 25,
  'test/chain/sync-fake.test.ts': 24,
  'test/web/web.test.ts': 23,
  'test/cli/crash.test.ts': 22,
  'test/method/publish.test.ts': 22,
  'test/sync/x402-streams-sync.test.ts': 22,
  'test/e2e/trust-provider.test.ts': 20,
  'test/e2e/standby.test.ts': 20,
  'test/e2e/trust-chain.test.ts': 20,
  'test/e2e/demo.test.ts': 19,
  'test/e2e/audit-bundle.test.ts': 17,
  'test/cli/terminal.test.ts': 16,
  'test/e2e/versioned-ids-migration.test.ts': 16,
  'test/web/people-groups.test.ts': 16,
  'test/mcp/mcp.test.ts': 15,
  'src/devchain/economy.test.ts': 13,
  'src/db/migrate.test.ts': 13,
  'test/web/web3.test.ts': 12,
  'test/api/caching.test.ts': 12,
  'src/db/pglite/template.test.ts': 12,
  'test/db/pglite-kill.test.ts': 10,
  'test/method/method.test.ts': 10,
  'test/chain/anvil.test.ts': 10,
  'test/api/strict-contract.test.ts': 10,
  'test/cli/schedule.test.ts': 10,
  'test/method/groups.test.ts': 9,
  'test/api/search-quality.test.ts': 8,
  'test/method/method3.test.ts': 8,
  'src/catalog/store.test.ts': 8,
  'src/db/fact-indexes.test.ts': 6,
  'src/db/describe.test.ts': 6,
  'test/method/digests2.test.ts': 6,
  'test/db/search-migration.test.ts': 6,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expected = (spec: TestSpecification): number => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return cached ?? (SECONDS[file] ?? 0) * 1000;
    };
    const estimates = new Map((await super.sort(files)).map((spec, i) => [spec, { ms: expected(spec), i }]));
    return [...estimates.keys()].sort(
      (a, b) => estimates.get(b)!.ms - estimates.get(a)!.ms || estimates.get(a)!.i - estimates.get(b)!.i,
    );
  }
}
