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

/** The step files of one folder, by file name. */
function stepFiles(dir: string, prefix = ''): Map<string, { file: string; full: string }> {
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => STEP_FILE.test(f)) : [];
  return new Map(files.map((f) => [f, { file: prefix + f, full: path.join(dir, f) }]));
}

/**
 * The steps of one method version (the same files `audit` runs): the common steps
 * `sql/method/NN_name.sql` and the version's own `sql/method/<version>/NNx_name.sql`, all in
 * order of file name. A version's file of the same name as a common one replaces it (1.0.0's flat
 * digests replace the composed ones of 2.0.0 and 3.0.0); the others are added between them.
 */
export function loadMethodSteps(version = METHOD_VERSION, dir = path.join(sqlDir, 'method')): MethodStep[] {
  const files = new Map([...stepFiles(dir), ...stepFiles(path.join(dir, version), `${version}/`)]);
  return [...files.keys()].sort().map((name) => {
    const { file, full } = files.get(name)!;
    return {
      name: name.replace(/^\d{2}[a-z]?_/, '').slice(0, -4),
      file,
      sql: readFileSync(full, 'utf8'),
    };
  });
}
