/**
 * The API as its own process for the benchmark: reads BENCH_API_DATABASE_URL, listens on
 * 127.0.0.1 (port 0 = any) and prints `{"port":N}` on stdout once listening. Stops on SIGTERM.
 */
import { buildApi } from '../../src/api/index.ts';
import { openDatabase } from '../../src/db/index.ts';

const url = process.env.BENCH_API_DATABASE_URL;
if (!url) throw new Error('BENCH_API_DATABASE_URL is not set');
const database = await openDatabase({ databaseUrl: url, maxConnections: 10 });
const app = await buildApi(database.db, { rateLimitPerMinute: 1_000_000_000, cadenceSeconds: 900 });
await app.listen({ port: Number(process.env.BENCH_API_PORT ?? 0), host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => {
  void app
    .close()
    .then(() => database.close())
    .then(() => process.exit(0));
});
