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
