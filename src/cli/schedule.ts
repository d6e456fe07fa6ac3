import type http from 'node:http';
import { Cron } from 'croner';
import { DURATION_PATTERN } from '../config/index.ts';
import { migrate } from '../db/migrate.ts';
import { describeError, isTemporary } from '../lib/errors.ts';
import { secretUrls } from '../config/index.ts';
import type { CommandContext } from './context.ts';
import { runOnce } from './run.ts';
import { startApi, untilAborted, type RunningApi } from './serve.ts';
import { holdPort, releasePort } from './port.ts';
import { openStore } from './store.ts';

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** The job of a schedule and the cadence in seconds the API announces (for cron: the gap between its next two runs). */
export interface Schedule {
  cadenceSeconds: number;
  /**
   * Arms the job for the runs after the first one, which the caller makes itself at start: a
   * duration runs every so many seconds from the first run's start (`firstRunStartedAt`), a
   * cron expression at its next times. Armed only once the first run is over: a job armed
   * earlier fires within a second (croner's first tick), a second run at start. `protect` keeps
   * runs from overlapping; a run that overruns the next slot makes it skip to the one after.
   */
  start(firstRunStartedAt: Date): Cron;
}

/**
 * The scheduler for `--every`: a duration becomes an interval job, a cron expression (UTC) a
 * cron job. A malformed cron expression throws here, before anything runs.
 */
export function makeSchedule(every: string, task: () => Promise<void>): Schedule {
  const duration = DURATION_PATTERN.exec(every);
  if (duration) {
    const seconds = Number(duration[1]) * UNIT_SECONDS[duration[2] as keyof typeof UNIT_SECONDS];
    return {
      cadenceSeconds: seconds,
      // Every second, at most once per `seconds`; the first at startAt (croner rounds it up to a whole second).
      start: (first) =>
        new Cron(
          '* * * * * *',
          { interval: seconds, protect: true, startAt: new Date(first.getTime() + seconds * 1000) },
          task,
        ),
    };
  }
  // croner reads 5 fields as minutes-first and 6 as seconds-first; UTC, like the method's days.
  // A job without a function schedules nothing: it only checks the expression and says its times.
  const [a, b] = new Cron(every, { timezone: 'UTC' }).nextRuns(2);
  return {
    cadenceSeconds: a && b ? Math.max(1, Math.round((b.getTime() - a.getTime()) / 1000)) : 900,
    start: () => new Cron(every, { protect: true, timezone: 'UTC' }, task),
  };
}

/**
 * `x402-tally schedule`: runs at start and then on the cadence, and serves the API in the same
 * process (unless --no-serve). A failing run is logged with its class (75 temporary, 1 failure)
 * and the next one is attempted on schedule; the server keeps serving the last published
 * generation. Stops on SIGINT/SIGTERM after the current run.
 */
export async function scheduleCommand(ctx: CommandContext): Promise<number> {
  // The port before any work: a taken one exits 1 naming PORT, before the database is opened.
  const held = ctx.args.noServe ? undefined : await holdPort(ctx.config);
  try {
    return await scheduleOn(ctx, held);
  } finally {
    if (held) await releasePort(held);
  }
}

async function scheduleOn(ctx: CommandContext, held: http.Server | undefined): Promise<number> {
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
        const message = describeError(error, { urls: secretUrls(ctx.config) });
        ctx.log.error({ exit, error: message }, 'scheduled run failed');
        ctx.err(`run failed (exit ${exit}): ${message}`);
      }
    })();
    running = attempt;
    await attempt;
  };
  const { start, cadenceSeconds } = makeSchedule(ctx.config.SCHEDULE_EVERY, task);
  let job: Cron | undefined;
  try {
    // Schema first, so the API can start while the first run backfills (it serves the last
    // published generation, or 503 no_generation before the first one).
    await migrate(database.db, undefined, { copyFacts: false });
    if (!ctx.args.noServe) {
      api = await startApi(ctx, database, cadenceSeconds, held);
      ctx.out(`serving ${api.url}/api/v1/meta; running every ${ctx.config.SCHEDULE_EVERY}`);
    }
    // The first run now, then the job, so that the start makes one run (makeSchedule: start).
    const firstRunStartedAt = new Date();
    await task();
    if (!ctx.signal.aborted) job = start(firstRunStartedAt);
    await untilAborted(ctx.signal);
    return 0;
  } finally {
    job?.stop();
    await running.catch(() => {});
    await api?.close();
    await database.close();
  }
}
