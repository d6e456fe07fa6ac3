import http from 'node:http';
import { ConfigError, type Config } from '../config/index.ts';
import { errorBody } from '../api/errors.ts';

/** What a request gets while the command that holds the port is still starting (seeding, migrating). */
const STARTING_RETRY_SECONDS = 5;

/**
 * Binds HOST:PORT before a command does any work (serve, schedule, demo) and holds it: a taken
 * port is a configuration mistake found at once (exit 1 naming PORT), not after a minute of
 * seeding or syncing, and nobody can take the port in between. Until the API takes the server
 * over (ApiOptions.server), every request is answered 503 `starting` with a Retry-After.
 */
export async function holdPort(config: Pick<Config, 'PORT' | 'HOST'>): Promise<http.Server> {
  // requireHostHeader: false, as the API's own server (src/api/index.ts), which this one becomes
  const server = http.createServer({ requireHostHeader: false }, (_request, response) => {
    const body = errorBody('starting', 'x402-tally is starting; try again in a few seconds');
    response.writeHead(503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Retry-After': String(STARTING_RETRY_SECONDS),
      'Cache-Control': 'no-store',
    });
    response.end(body);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const why = code === 'EADDRINUSE' ? 'is in use' : code === 'EACCES' ? 'is not allowed' : 'is not an address here';
      throw new ConfigError([
        `PORT: port ${config.PORT} on ${config.HOST} ${why}; choose another with --port or PORT (or HOST)`,
      ]);
    }
    throw error;
  }
  return server;
}

/** Closes a held server that the API never took over (the command failed before serving). */
export async function releasePort(server: http.Server): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
