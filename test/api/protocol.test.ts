import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import { holdPort, releasePort } from '../../src/cli/port.ts';
import { freshDatabase, type TestDatabase } from '../helpers/db.ts';
import { seedFixture } from './fixture.ts';

/** Issue 12, finding 10: protocol corners over a real socket, each answered in the JSON error shape. */
let db: TestDatabase;
let app: FastifyInstance;
let port: number;

/**
 * Sends raw bytes, returns the raw answer (status line, headers, body) once it is complete: the
 * server closed the connection, or the body has its Content-Length, or its last chunk came. No time
 * limit of its own (the test's timeout bounds it), so a slow machine cannot cut an answer short.
 */
function raw(request: string, to = port): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(to, '127.0.0.1', () => socket.write(request));
    let data = '';
    const complete = () => {
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const head = data.slice(0, end).toLowerCase();
      const body = Buffer.byteLength(data.slice(end + 4));
      const length = /\r\ncontent-length: *(\d+)/.exec(head);
      if (length) return body >= Number(length[1]);
      return /\r\ntransfer-encoding: *chunked/.test(head) && data.endsWith('\r\n0\r\n\r\n');
    };
    socket.on('data', (c) => {
      data += c.toString('utf8');
      if (complete()) {
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data));
  });
}
const statusOf = (answer: string) => Number(answer.split(' ')[1]);
const bodyOf = (answer: string) =>
  JSON.parse(
    answer
      .slice(answer.indexOf('\r\n\r\n') + 4)
      .split('\r\n')
      .find((l) => l.startsWith('{')) ?? 'null',
  );

beforeAll(async () => {
  db = await freshDatabase('pglite');
  await seedFixture(db.db);
  app = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await db?.close();
});

describe('protocol corners', () => {
  it('error: a slug of 2,100 to 10,000 characters is 414 uri_too_long', async () => {
    for (const n of [2100, 5000, 10_000]) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/sellers/${'a'.repeat(n)}`);
      expect(res.status, String(n)).toBe(414);
      expect(((await res.json()) as any).error.code).toBe('uri_too_long');
    }
  });

  it('error: HTTP/1.1 without Host is a 400 in the JSON error shape', async () => {
    const answer = await raw('GET /api/v1/meta HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(statusOf(answer)).toBe(400);
    expect(bodyOf(answer)).toEqual({ error: { code: 'bad_request', message: expect.stringContaining('Host') } });
  });

  it('error: CONNECT is a 405 with Allow', async () => {
    const answer = await raw(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(statusOf(answer)).toBe(405);
    expect(answer.toLowerCase()).toContain('allow: get, head, options');
    expect(bodyOf(answer).error.code).toBe('method_not_allowed');
  });

  it('behavior: an idle connection is kept for 72 s, on the server the API makes and on a held port', async () => {
    // What a client is told it may reuse a connection for: Fastify's default keepAliveTimeout,
    // 72 s. At Node's 5 s (the API makes its server in serverFactory, where Fastify sets none), a
    // client writing its next request after 6 s of other work had it reset: ECONNRESET in the
    // MCP and fuzz tests on a loaded machine, where the client shares the server's event loop.
    const keepAlive = (answer: string) => /\r\nkeep-alive: *([^\r]*)/i.exec(answer)?.[1];
    const answer = await raw(`GET /api/v1/meta HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(statusOf(answer)).toBe(200);
    expect(keepAlive(answer)).toBe('timeout=72');
    // serve, schedule and demo hand the API the server that held their port (src/cli/serve.ts).
    const held = await holdPort({ PORT: 0, HOST: '127.0.0.1' });
    const other = await buildApi(db.db, { rateLimitPerMinute: 100_000, cadenceSeconds: 900, server: held });
    try {
      await other.ready();
      const heldPort = (held.address() as net.AddressInfo).port;
      const heldAnswer = await raw(`GET /api/v1/meta HTTP/1.1\r\nHost: 127.0.0.1:${heldPort}\r\n\r\n`, heldPort);
      expect(statusOf(heldAnswer)).toBe(200);
      expect(keepAlive(heldAnswer)).toBe('timeout=72');
    } finally {
      await other.close();
      await releasePort(held);
    }
  });
});
