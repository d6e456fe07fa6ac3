import { Cron } from 'croner';
import { DURATION_PATTERN } from '../config/index.ts';
import { migrate } from '../db/migrate.ts';
import { isTemporary } from '../lib/errors.ts';
import { secretUrls } from '../config/index.ts';
import { redactText } from '../config/redact.ts';
import { describeError } from './command.ts';
import type { CommandContext } from './context.ts';
import { runOnce } from './run.ts';
import { startApi, untilAborted, type RunningApi } from './serve.ts';
import { openStore } from './store.ts';

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/**
 * The scheduler for `--every`: a duration becomes an interval job (first run at start, then every
 * so many seconds), a cron expression a cron job. `protect` keeps runs from overlapping. Returns
 * the cadence in seconds that the API announces (for cron: the gap between its next two runs).
 */
export function makeSchedule(every: string, task: () => Promise<void>): { job: Cron; cadenceSeconds: number } {
  const duration = DURATION_PATTERN.exec(every);
  if (duration) {
    const seconds = Number(duration[1]) * UNIT_SECONDS[duration[2] as keyof typeof UNIT_SECONDS];
    const job = new Cron('* * * * * *', { interval: seconds, protect: true, paused: true }, task);
    return { job, cadenceSeconds: seconds };
  }
  // croner reads 5 fields as minutes-first and 6 as seconds-first; UTC, like the method's days.
  const job = new Cron(every, { protect: true, paused: true, timezone: 'UTC' }, task);
  const [a, b] = job.nextRuns(2);
  const cadenceSeconds = a && b ? Math.max(1, Math.round((b.getTime() - a.getTime()) / 1000)) : 900;
  return { job, cadenceSeconds };
}

/**
 * `x402-tally schedule`: runs at start and then on the cadence, and serves the API in the same
 * process (unless --no-serve). A failing run is logged with its class (75 temporary, 1 failure)
 * and the next one is attempted on schedule; the server keeps serving the last published
 * generation. Stops on SIGINT/SIGTERM after the current run.
 */
export async function scheduleCommand(ctx: CommandContext): Promise<number> {
  const database = await openStore(ctx.config);
  let running: Promise<void> = Promise.resolve();
  let api: RunningApi | undefined;
  const task = async () => {
    if (ctx.signal.aborted) return;
    const attempt = (async () => {
      try {
        await runOnce(ctx, database);
      } catch (error) {
        const exit = isTemporary(error) ? 75 : 1;
        // Redacted like runCommand's own failure line: the message may quote a configured URL.
        const message = redactText(describeError(error), secretUrls(ctx.config));
        ctx.log.error({ exit, error: message }, 'scheduled run failed');
        ctx.err(`run failed (exit ${exit}): ${message}`);
      }
    })();
    running = attempt;
    await attempt;
  };
  const { job, cadenceSeconds } = makeSchedule(ctx.config.SCHEDULE_EVERY, task);
  try {
    // Schema first, so the API can start while the first run backfills (it serves the last
    // published generation, or 503 no_generation before the first one).
    await migrate(database.db);
    if (!ctx.args.noServe) {
      api = await startApi(ctx, database, cadenceSeconds);
      ctx.out(`serving ${api.url}/api/v1/meta; running every ${ctx.config.SCHEDULE_EVERY}`);
    }
    const first = job.trigger();
    job.resume();
    await first;
    await untilAborted(ctx.signal);
    return 0;
  } finally {
    job.stop();
    await running.catch(() => {});
    await api?.close();
    await database.close();
  }
}
