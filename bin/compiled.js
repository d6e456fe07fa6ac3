// The command line compiled to plain JavaScript, for `audit` (bin/x402-tally.js): the sources
// bundled by esbuild (tsx's own compiler) into `.build/<digest>/` of the project, each command a
// chunk of its own, loaded when used. Run that way, a process has no TypeScript loader: tsx's
// `register()` runs its hooks in a thread of their own, ~40 MB of resident memory
// (docs/benchmarks.md, "Audit memory").
//
// It is a cache, made by this code from src/ and named by a digest of every source file, so an
// edited source is a new build; written whole or not at all (a temporary folder renamed). When it
// cannot be made (a read-only install, esbuild missing), the caller runs the sources through tsx
// as every other command does.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Builds older than this are removed when a new one is made (another checkout state's). */
const KEEP_OLD_MS = 24 * 3600 * 1000;

/** Every source file a build holds: src/ without its tests. */
function sources(dir = path.join(root, 'src')) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sources(full);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
    });
}

/**
 * The compiled entry (`.build/<digest>/main.mjs`, two folders below the project root, as
 * src/cli/main.ts is, so src/lib/paths.ts finds the root from it), made when missing; null when
 * it cannot be made.
 */
export function compiledCli() {
  try {
    const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild');
    const options = {
      entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outExtension: { '.js': '.mjs' },
      logLevel: 'silent',
    };
    const hash = createHash('sha256').update(`esbuild ${esbuild.version}\n${JSON.stringify(options)}\n`);
    for (const file of sources()) hash.update(`${path.relative(root, file)}\n`).update(readFileSync(file));
    const builds = path.join(root, '.build');
    const dir = path.join(builds, hash.digest('hex').slice(0, 16));
    const entry = path.join(dir, 'main.mjs');
    if (existsSync(entry)) return entry;

    mkdirSync(builds, { recursive: true });
    const partial = `${dir}.${process.pid}.partial`;
    esbuild.buildSync({ ...options, outdir: partial });
    try {
      renameSync(partial, dir);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another process made it first
    }
    for (const name of readdirSync(builds)) {
      const old = path.join(builds, name);
      if (old !== dir && Date.now() - statSync(old).mtimeMs > KEEP_OLD_MS)
        rmSync(old, { recursive: true, force: true });
    }
    return existsSync(entry) ? entry : null;
  } catch {
    return null;
  }
}
