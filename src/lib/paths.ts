import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** The project root (where package.json and sql/ live), independent of the working directory. */
export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sqlDir = path.join(projectRoot, 'sql');
