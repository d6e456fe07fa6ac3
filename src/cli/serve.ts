import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { buildApi } from '../api/index.ts';
import { injectClient } from '../mcp/client.ts';
import { registerMcpRoute } from '../mcp/http.ts';
import type { Database } from '../db/index.ts';
import { schemaStatus } from '../db/migrate.ts';
import { TallyError } from '../lib/errors.ts';
import type { CommandContext } from './context.ts';
import { holdPort, releasePort } from './port.ts';
import { openStore } from './store.ts';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the API, with the MCP server at /mcp, on an opened database; resolves once it serves.
 * On `held` (src/cli/port.ts: bound at the command's start) when given, else on HOST:PORT now.
 */
export async function startApi(
  ctx: CommandContext,
  database: Database,
  cadenceSeconds: number,
  held?: http.Server,
): Promise<RunningApi> {
  const internalToken = randomBytes(16).toString('hex');
  const log = ctx.log.child({ stage: 'api' });
  const app = await buildApi(database.db, {
    rateLimitPerMinute: ctx.config.RATE_LIMIT_PER_MINUTE,
    cadenceSeconds,
    publicChain: ctx.config.PUBLIC_CHAIN,
    log,
    internalToken,
    ...(held ? { server: held } : {}),
  });
  registerMcpRoute(app, injectClient(app, internalToken), log);
  let address: string;
  try {
    if (held) {
      await app.ready();
      address = urlOf(held);
    } else {
      address = await app.listen({ port: ctx.config.PORT, host: ctx.config.HOST });
    }
  } catch (error) {
    await app.close();
    if (held) await releasePort(held);
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new TallyError(
        `port ${ctx.config.PORT} on ${ctx.config.HOST} is in use; choose another with --port or PORT`,
      );
    }
    throw error;
  }
  const url = address.replace('://0.0.0.0', '://127.0.0.1').replace('://[::]', '://127.0.0.1');
  ctx.log.info({ url }, 'api listening');
  ctx.io.onListening?.(url);
  return {
    url,
    close: async () => {
      await app.close();
      // Fastify closes only a server it listened itself.
      if (held) await releasePort(held);
    },
  };
}

/** http://host:port of a listening server, as Fastify's listen() reports its own. */
function urlOf(server: http.Server): string {
  const a = server.address();
  if (!a || typeof a === 'string') throw new TallyError('the held API port is not listening');
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
}

/** Resolves when the signal fires (SIGINT/SIGTERM by default). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Fails (exit 1) when the schema is behind the code: serve only reads and never migrates. */
export async function assertSchemaCurrent(database: Database): Promise<void> {
  const status = await schemaStatus(database.db);
  if (status.pending.length > 0) {
    throw new TallyError(
      `the database schema is at version ${status.current} but this code needs ${status.latest} ` +
        `(pending: ${status.pending.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`).join(', ')}); ` +
        'run `x402-tally migrate` (or `run`) with a role that may write, then start serve again',
    );
  }
}

/** `x402-tally serve`: the read-only API until SIGINT/SIGTERM. */
export async function serveCommand(ctx: CommandContext): Promise<number> {
  const held = await holdPort(ctx.config);
  try {
    const database = await openStore(ctx.config, { readOnly: true });
    try {
      await assertSchemaCurrent(database);
      const api = await startApi(ctx, database, ctx.config.CADENCE_SECONDS, held);
      ctx.out(`serving ${api.url}/api/v1/meta`);
      await untilAborted(ctx.signal);
      await api.close();
      return 0;
    } finally {
      await database.close();
    }
  } finally {
    await releasePort(held);
  }
}
