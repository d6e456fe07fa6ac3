import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sqlDir } from '../lib/paths.ts';

export interface MethodStep {
  /** The file name without its number and extension, e.g. `sellers`. */
  name: string;
  file: string;
  sql: string;
}

/** The steps of the method: `sql/method/NN_name.sql` in order (the same files `audit` runs). */
export function loadMethodSteps(dir = path.join(sqlDir, 'method')): MethodStep[] {
  return readdirSync(dir)
    .filter((file) => /^\d{2}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ name: file.slice(3, -4), file, sql: readFileSync(path.join(dir, file), 'utf8') }));
}
