/**
 * `npm run lint:openapi`: writes the served OpenAPI document to a temporary file and lints it
 * with Redocly CLI under the committed redocly.yaml. Offline (no remote refs or rules; telemetry
 * and update checks off). Exits with redocly's status. Safe to re-run.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/lib/paths.ts';
import { writeJson } from '../src/lib/json.ts';
import { openApiDocument } from '../src/api/openapi.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'x402-tally-openapi-'));
const file = path.join(dir, 'openapi.json');
try {
  writeFileSync(file, writeJson(openApiDocument()));
  const bin = path.join(projectRoot, 'node_modules', '.bin', process.platform === 'win32' ? 'redocly.cmd' : 'redocly');
  const result = spawnSync(
    bin,
    ['lint', file, '--config', path.join(projectRoot, 'redocly.yaml'), '--format', 'stylish'],
    {
      stdio: 'inherit',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
