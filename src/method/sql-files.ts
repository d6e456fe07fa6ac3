import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sqlDir } from '../lib/paths.ts';
import { METHOD_VERSION } from './constants.ts';

export interface MethodStep {
  /** The file name without its number and extension, e.g. `sellers`. */
  name: string;
  file: string;
  sql: string;
}

const STEP_FILE = /^\d{2}[a-z]?_[a-z0-9_]+\.sql$/;

/**
 * The steps of one method version (the same files `audit` runs): the common steps
 * `sql/method/NN_name.sql` and the version's own `sql/method/<version>/NNx_name.sql` (its
 * digests), all in order of file name.
 */
export function loadMethodSteps(version = METHOD_VERSION, dir = path.join(sqlDir, 'method')): MethodStep[] {
  const versionDir = path.join(dir, version);
  const files = [
    ...readdirSync(dir)
      .filter((f) => STEP_FILE.test(f))
      .map((file) => ({ file, full: path.join(dir, file) })),
    ...(existsSync(versionDir) ? readdirSync(versionDir) : [])
      .filter((f) => STEP_FILE.test(f))
      .map((file) => ({ file: `${version}/${file}`, full: path.join(versionDir, file) })),
  ];
  return files
    .sort((a, b) => (path.basename(a.file) < path.basename(b.file) ? -1 : 1))
    .map(({ file, full }) => ({
      name: path
        .basename(file)
        .replace(/^\d{2}[a-z]?_/, '')
        .slice(0, -4),
      file,
      sql: readFileSync(full, 'utf8'),
    }));
}
