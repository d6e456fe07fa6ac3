import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the longest files first, the `integration` project's before the `unit` project's. Two
 * workers share ~125 files whose times range from 0 to 245 s: a long file started last runs alone
 * at the end while the other worker idles (vitest's own order, without its cache of past durations
 * as in a clean CI checkout, is by file size, which put test/method/partitions.test.ts among the
 * last). The projects are not interleaved because a worker keeps its process from one file to the
 * next only while they are of the same project (`isolate: false`, vitest.config.ts): a switch costs
 * a new process and its imports. The unit project's files are short (the longest, ~24 s, start
 * together when the integration files run out), so they fill the end. The order is all this
 * changes: what runs, and where, is vitest's.
 *
 * A file's expected duration is vitest's cached one when this checkout has run it, else the
 * figure below, else 0 (and vitest's order among those). The figures are seconds, every file of 3 s
 * or more in the lead's whole run on Postgres and PGlite on the 2-core Intel host, quiet
 * (2026-11-28, 17:03-17:22 UTC, `--reporter=json`); only their order matters, and a file missing
 * from them only starts later.
 */
const SECONDS: Record<string, number> = {
  'test/method/incremental3.test.ts': 245,
  'test/method/partitions.test.ts': 173,
  'test/api/search.test.ts': 99,
  'test/method/incremental.test.ts': 99,
  'test/api/fast-path.test.ts': 71,
  'test/method/cold.test.ts': 67,
  'test/e2e/demo-x402.test.ts': 55,
  'test/e2e/compact-migration.test.ts': 46,
  'test/fuzz/params.test.ts': 46,
  'test/cli/bin.test.ts': 45,
  'test/e2e/run-audit.test.ts': 44,
  'test/chain/sync-fake.test.ts': 41,
  'test/method/publish.test.ts': 41,
  'test/web/people.test.ts': 37,
  'test/cli/crash.test.ts': 30,
  'test/e2e/upgrade-3.test.ts': 30,
  'test/method/gen-sellers-partitions.test.ts': 30,
  'test/e2e/demo.test.ts': 29,
  'test/sync/x402-streams-sync.test.ts': 27,
  'src/db/pglite/template.test.ts': 24,
  'test/cli/terminal.test.ts': 24,
  'src/db/migrate.test.ts': 23,
  'test/e2e/leaner-work-state-migration.test.ts': 23,
  'test/db/pglite-kill.test.ts': 21,
  'test/chain/anvil.test.ts': 20,
  'test/web/web.test.ts': 19,
  'test/e2e/trust-provider.test.ts': 18,
  'test/e2e/versioned-ids-migration.test.ts': 18,
  'test/e2e/day-payer-multisets-migration.test.ts': 17,
  'test/e2e/directory-numbers-migration.test.ts': 17,
  'test/method/groups.test.ts': 17,
  'test/api/caching.test.ts': 16,
  'test/e2e/trust-chain.test.ts': 14,
  'test/method/method.test.ts': 14,
  'test/cli/schedule.test.ts': 13,
  'test/e2e/slim-blocks-migration.test.ts': 13,
  'test/mcp/mcp.test.ts': 13,
  'test/method/groups-steady.test.ts': 13,
  'test/method/method3.test.ts': 13,
  'src/catalog/store.test.ts': 12,
  'src/db/describe.test.ts': 11,
  'test/db/search-migration.test.ts': 11,
  'test/e2e/audit-bundle.test.ts': 11,
  'test/web/people-groups.test.ts': 11,
  'test/web/web3.test.ts': 11,
  'src/db/fact-indexes.test.ts': 10,
  'test/api/strict-contract.test.ts': 10,
  'test/e2e/standby.test.ts': 8,
  'test/method/median.test.ts': 8,
  'src/db/address-refs.test.ts': 7,
  'test/api/search-quality.test.ts': 7,
  'test/chain/x402-contracts-build.test.ts': 6,
  'test/api/contract.test.ts': 5,
  'test/api/directory.test.ts': 5,
  'test/cli/lock.test.ts': 5,
  'test/db/migrate.test.ts': 5,
  'test/method/derived.test.ts': 5,
  'test/method/rules-once.test.ts': 5,
  'test/run/overlap.test.ts': 5,
  'test/api/bad-input.test.ts': 4,
  'test/mcp/list-sellers.test.ts': 4,
  'test/method/digests2.test.ts': 4,
  'src/catalog/source.test.ts': 3,
  'test/api/bundle.test.ts': 3,
  'test/api/csv-faults.test.ts': 3,
  'test/mcp/outputs.test.ts': 3,
  'test/sync/staging-tables.test.ts': 3,
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
    const unit = (spec: TestSpecification): number => (spec.project.name === 'unit' ? 1 : 0);
    return [...estimates.keys()].sort(
      (a, b) =>
        unit(a) - unit(b) || estimates.get(b)!.ms - estimates.get(a)!.ms || estimates.get(a)!.i - estimates.get(b)!.i,
    );
  }
}
