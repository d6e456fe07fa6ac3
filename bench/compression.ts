/**
 * Compression benchmark (docs/benchmarks.md, "API compression"): a 2,000-listing generation in an
 * in-memory PGlite, the API on loopback, 3,000 requests of the first directory page (a cache hit)
 * per encoding, 16 in flight, three rounds; and the body sizes per encoding.
 *
 *   npx tsx bench/compression.ts
 */
import http from 'node:http';
import { buildApi } from '../src/api/index.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrate } from '../src/db/migrate.ts';
import { seedBenchGeneration } from './api/seed.ts';

const database = await openDatabase({ dataDir: null });
await migrate(database.db);
await seedBenchGeneration(database.db, { listings: 2000, sellers: 1000, ranked: 500 });
const app = await buildApi(database.db, { rateLimitPerMinute: 1e9, cadenceSeconds: 900 });
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const get = (path: string, encoding?: string) =>
  new Promise<number>((resolve) =>
    http
      .request(`${base}${path}`, { agent, headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
      })
      .end(),
  );
for (const path of ['/api/v1/sellers', '/api/v1/rankings']) {
  console.log(
    `${path}: identity ${await get(path)} bytes, gzip ${await get(path, 'gzip')}, br ${await get(path, 'br')}`,
  );
}
for (const round of [1, 2, 3]) {
  for (const encoding of [undefined, 'gzip', 'br']) {
    const started = performance.now();
    const n = 3000;
    for (let i = 0; i < n; i += 16)
      await Promise.all(Array.from({ length: 16 }, () => get('/api/v1/sellers', encoding)));
    console.log(
      `round ${round} ${encoding ?? 'identity'}: ${Math.round(n / ((performance.now() - started) / 1000))} req/s`,
    );
  }
}
await app.close();
await database.close();
