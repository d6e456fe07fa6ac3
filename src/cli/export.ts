import path from 'node:path';
import { exportGeneration } from '../publish/index.ts';
import { parseGeneration, UsageError } from './args.ts';
import type { CommandContext } from './context.ts';
import { assertSchemaCurrent } from './serve.ts';
import { openStore } from './store.ts';

/** `x402-tally export --generation N --out DIR`: writes the generation's audit bundle. */
export async function exportCommand(ctx: CommandContext): Promise<number> {
  const generation = parseGeneration(ctx.args.generation);
  if (!ctx.args.out) throw new UsageError('--out DIR is required for export');
  const outDir = path.resolve(ctx.args.out);
  const database = await openStore(ctx.config, { readOnly: true });
  try {
    // Like serve: a schema behind the code is named as such, before any read.
    await assertSchemaCurrent(database);
    const manifest = await exportGeneration(database.db, generation, outDir);
    ctx.log.info({ generation, outDir }, 'bundle written');
    ctx.out(`wrote bundle of generation ${generation} to ${outDir} (${manifest.files.length} files)`);
    return 0;
  } finally {
    await database.close();
  }
}
