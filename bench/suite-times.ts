import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * A vitest reporter that appends one JSON line per test file to `SUITE_TIMES_OUT` (default
 * `bench/out/suite-times.jsonl`): the file, its project, and vitest's own diagnostic of it in ms:
 * `collect` (importing the file and what it imports, and running its describe callbacks), `prepare`
 * (the runner's set-up), `environment`, `setup` (setup files) and `duration` (its tests and hooks).
 * The JSON reporter gives only a file's start and end, so the time between files (a new process and
 * its imports per file, before `isolate: false`) shows there only as gaps; this names it.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run \
 *     --reporter=json --outputFile=suite.json --reporter=./bench/suite-times.ts --reporter=dot
 *
 * docs/benchmarks.md, "The suite's time between files (h-ci, 2026-11-28)".
 */
export default class SuiteTimes implements Reporter {
  private readonly out = process.env.SUITE_TIMES_OUT ?? 'bench/out/suite-times.jsonl';

  onInit(): void {
    mkdirSync(path.dirname(this.out), { recursive: true });
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const line = {
      file: path.relative(module.project.config.root, module.moduleId).split(path.sep).join('/'),
      project: module.project.name,
      collect: Math.round(d.collectDuration),
      prepare: Math.round(d.prepareDuration),
      environment: Math.round(d.environmentSetupDuration),
      setup: Math.round(d.setupDuration),
      duration: Math.round(d.duration),
    };
    appendFileSync(this.out, `${JSON.stringify(line)}\n`);
  }
}
