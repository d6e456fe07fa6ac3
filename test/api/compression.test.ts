import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedFixture } from './fixture.ts';

/** Compression of JSON answers when the client asks (issue 13), over real HTTP. */
let db: TestDatabase;
let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  db = await freshDatabase('pglite');
  await seedFixture(db.db);
  app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await app?.close();
  await db?.close();
});

/** The raw bytes and headers of a GET, without fetch's own decompression. */
async function raw(path: string, acceptEncoding?: string) {
  const { request } = await import('node:http');
  return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('compression', () => {
  it('behavior: gzip and br when asked; the same body as without, and smaller', async () => {
    const plain = await raw('/api/v1/sellers');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = await raw('/api/v1/sellers', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(gz.body.length).toBeLessThan(plain.body.length / 2);
    const br = await raw('/api/v1/sellers', 'br, gzip');
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(String(gz.headers.vary)).toMatch(/accept-encoding/i);
  });

  it('default: a small body stays as it is', async () => {
    const small = await raw('/api/v1/sellers/0x0000000000000000000000000000000000000001', 'gzip');
    expect(small.headers['content-encoding']).toBeUndefined();
  });
});
