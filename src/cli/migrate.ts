import { migrate } from '../db/migrate.ts';
import type { CommandContext } from './context.ts';
import { describeStore, openStore } from './store.ts';

/** `x402-tally migrate`: applies pending migrations; safe to re-run. */
export async function migrateCommand(ctx: CommandContext): Promise<number> {
  const database = await openStore(ctx.config);
  try {
    // The copy into the compact fact layout (src/db/compact-copy.ts), when pending: one log line a batch.
    const applied = await migrate(database.db, undefined, {
      copyFacts: {
        onBatch: (p) =>
          ctx.log.info(
            { nextBlock: p.nextBlock.toString(), topBlock: p.topBlock.toString(), transfers: p.transfers },
            'copied chain facts into the compact layout',
          ),
      },
    });
    ctx.log.info({ applied }, 'migrations applied');
    ctx.out(
      applied.length === 0
        ? `schema up to date (${describeStore(ctx.config)})`
        : `applied migrations ${applied.join(', ')}`,
    );
    return 0;
  } finally {
    await database.close();
  }
}
