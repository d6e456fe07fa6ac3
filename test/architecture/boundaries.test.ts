import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.ts';

/**
 * The one direction of the data (docs/architecture.md), enforced: each stage folder of src/ may
 * import only the folders listed for it. A lower stage that imports a higher one fails here,
 * naming the file and the import.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  lib: [],
  config: ['lib'],
  db: ['lib', 'config'],
  catalog: ['lib', 'config', 'db'],
  chain: ['lib', 'config'],
  sync: ['lib', 'config', 'chain', 'db'],
  method: ['lib', 'config', 'db'],
  publish: ['lib', 'config', 'db', 'method'],
  api: ['lib', 'config', 'db', 'publish'],
  mcp: ['lib', 'config', 'api'],
  devchain: ['lib', 'config', 'chain'],
  run: ['lib', 'config', 'db', 'catalog', 'chain', 'sync', 'method', 'publish'],
  cli: ['lib', 'config', 'db', 'catalog', 'chain', 'sync', 'method', 'publish', 'api', 'mcp', 'run', 'devchain'],
};

const src = path.join(projectRoot, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** The stage folders under src/ that a file imports (relative imports only). */
function importedStages(file: string): { stage: string; spec: string }[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].flatMap((m) => {
    const target = path.relative(src, path.resolve(path.dirname(file), m[1]!));
    const stage = target.split(path.sep)[0]!;
    return target.startsWith('..') ? [] : [{ stage, spec: m[1]! }];
  });
}

describe('import boundaries', () => {
  it('default: every folder of src/ has its rule', () => {
    const folders = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.sort()).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('behavior: no stage imports a stage above it', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(src)) {
      const own = path.relative(src, file).split(path.sep)[0]!;
      for (const { stage, spec } of importedStages(file)) {
        if (stage !== own && !MAY_IMPORT[own]!.includes(stage))
          violations.push(`${path.relative(projectRoot, file)} imports ${spec} (${own} -> ${stage})`);
      }
    }
    expect(violations).toEqual([]);
  });
});
