import type { Database } from '../db/index.ts';
import { runCycle, type RunReport } from '../run/cycle.ts';
import { defaultDeps, type CycleDeps } from '../run/deps.ts';
import { TallyError } from '../lib/errors.ts';
import type { CommandContext } from './context.ts';
import { openStore } from './store.ts';

/** The stages of the run: the real ones, with any replaced by the test's io.deps. */
export function cycleDeps(ctx: CommandContext): CycleDeps {
  return { ...defaultDeps(), ...ctx.io.deps };
}

/** One cycle on an opened database; prints one summary line. Used by run, schedule and demo. */
export async function runOnce(ctx: CommandContext, database: Database): Promise<RunReport> {
  if (ctx.config.RPC_URL.length === 0) {
    throw new TallyError('RPC_URL is required for run (set --rpc-url or RPC_URL)');
  }
  const started = performance.now();
  const report = await runCycle(database, ctx.config, cycleDeps(ctx), {
    log: ctx.log,
    signal: ctx.signal,
    ...(ctx.progress ? { progress: ctx.progress } : {}),
    ...(ctx.io.hook ? { hook: ctx.io.hook } : {}),
    ...(ctx.args.makeLatest ? { makeLatest: true } : {}),
  });
  const ms = Math.round(performance.now() - started);
  ctx.log.info({ generation: report.generation, ms, stages: report.ms }, 'run done');
  ctx.out(
    `published generation ${report.generation}${report.latest ? '' : ' as pinnable only (older than the live generation; see --make-latest)'} as of block ${report.asOf.number} ` +
      `(${new Date(Number(report.asOf.timestamp) * 1000).toISOString()}): ${report.listings} listings, ` +
      `${report.sellers} sellers, ${report.rejected} rejected items; ${ms} ms`,
  );
  return report;
}

/** `x402-tally run`: exit 0 published, 1 failed (nothing published), 75 temporary. */
export async function runCommandRun(ctx: CommandContext): Promise<number> {
  const database = await openStore(ctx.config);
  try {
    await runOnce(ctx, database);
    return 0;
  } finally {
    await database.close();
  }
}
