import { defineConfig } from 'vitest/config';
import LongestFirst from './test/sequencer.ts';

/**
 * Two projects, runnable apart (`npx vitest run --project unit`): `unit`, the tests beside the
 * code (src/**), and `integration`, the tests of whole parts and processes (test/**: HTTP, the
 * CLI, anvil, Chromium, MCP). `npm test` runs both. docs/development.md, "Tests".
 */
const shared = {
  // Generous: on the 2-core machine with other work running (load average 8-10), end-to-end
  // tests that open PGlite, sync from anvil and compute took 60-70 s (2026-11-27). A limit is
  // there to end a hung test, not to time a slow one: speed targets live in bench/.
  testTimeout: 240_000,
  hookTimeout: 300_000,
  // Makes the migrated templates every fresh test database is copied from, once, before the
  // workers start (test/helpers/db.ts). Each test gets a database of its own, so files may run
  // in parallel.
  globalSetup: ['test/global-setup.ts'],
  // A worker keeps its process, and the modules it has imported, from one file to the next (of
  // the same project) instead of starting a new one per file. A new process re-imports the code
  // under test and its libraries for every file: 2-4 s per file on a quiet machine, which with
  // ~125 files was most of the time a worker sat without a running test (docs/development.md,
  // "The test suite: where the time goes"). Measured 2026-11-28 on 16 small test/api and test/cli
  // files, PGlite only, load 10-14: vitest's import total 187 s isolated vs 32 s shared, wall 309 vs
  // 183 s. Each file still gets its own databases (freshDatabase), chains and servers, and closes
  // them; a test that changes process state (timers, environment) restores it in its own hooks.
  isolate: false,
};

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // The longest files first, so that the last to finish are short ones (test/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      { test: { ...shared, name: 'unit', include: ['src/**/*.test.ts'] } },
      { test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'] } },
    ],
  },
});
