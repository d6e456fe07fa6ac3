import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { buildApi } from '../../src/api/index.ts';
import type { Schema } from '../../src/db/index.ts';
import { silentLogger } from '../../src/lib/log.ts';
import { projectRoot } from '../../src/lib/paths.ts';
import { injectClient } from '../../src/mcp/client.ts';
import { registerMcpRoute } from '../../src/mcp/http.ts';
import { freshDatabase, type TestDatabase } from './db.ts';

/**
 * The MCP server and the official SDK client as the tests start them (test/mcp, test/fuzz): the
 * API with its /mcp route listening on 127.0.0.1, as `serve` wires it (src/cli/serve.ts), and a
 * client connected over Streamable HTTP or, to `x402-tally mcp` as a child process, over stdio.
 */

/** A tools/call answer as the tests read it. */
export type ToolResult = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, any>;
};

/**
 * How long the client's `initialize` may take: a bound on a hang, not a speed claim. The SDK's
 * own 60 s is within reach of `x402-tally mcp`, which opens its database before it answers,
 * started beside a CPU-heavy job on the 2-core CI machine.
 */
const CONNECT_TIMEOUT_MS = 120_000;

/** The API with the MCP route, listening on 127.0.0.1; `url` is its base (no trailing slash). */
export async function serveMcp(
  db: Kysely<Schema>,
  options: { rateLimitPerMinute?: number } = {},
): Promise<{ app: FastifyInstance; url: string }> {
  const internalToken = randomBytes(8).toString('hex');
  const app = await buildApi(db, {
    rateLimitPerMinute: options.rateLimitPerMinute ?? 100_000,
    cadenceSeconds: 900,
    internalToken,
  });
  registerMcpRoute(app, injectClient(app, internalToken), silentLogger);
  return { app, url: await app.listen({ port: 0, host: '127.0.0.1' }) };
}

/** The SDK's client, connected over Streamable HTTP to the /mcp route of the server at `base`. */
export async function connectHttp(base: string, name = 'test'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)), { timeout: CONNECT_TIMEOUT_MS });
  return client;
}

/** What `useMcp` gives a describe block once its beforeAll has run. */
export interface McpFixture {
  db: TestDatabase;
  app: FastifyInstance;
  /** The API's base URL (no trailing slash). */
  base: string;
  /** The SDK's client over Streamable HTTP. */
  client: Client;
  /** tools/call of `name` with `args`, through the client. */
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** The body the API answers to a GET of `path` over HTTP. */
  apiText(path: string): Promise<string>;
}

/**
 * For a describe block: in beforeAll a fresh database on `backend` seeded by `seed`, the API with
 * its /mcp route serving it (`serveMcp`) and the SDK's client connected to it (`connectHttp`); all
 * closed in afterAll. The fields are set once beforeAll has run.
 */
export function useMcp(backend: 'pglite' | 'pg', seed: (db: Kysely<Schema>) => Promise<unknown>): McpFixture {
  const fixture = {
    call: async (name: string, args: Record<string, unknown>) =>
      (await fixture.client.callTool({ name, arguments: args })) as ToolResult,
    apiText: async (path: string) => (await fetch(fixture.base + path)).text(),
  } as McpFixture;
  beforeAll(async () => {
    fixture.db = await freshDatabase(backend);
    await seed(fixture.db.db);
    ({ app: fixture.app, url: fixture.base } = await serveMcp(fixture.db.db));
    fixture.client = await connectHttp(fixture.base);
  });
  afterAll(async () => {
    await fixture.client?.close();
    await fixture.app?.close();
    await fixture.db?.close();
  });
  return fixture;
}

/**
 * The SDK's client, connected over stdio to `x402-tally mcp` started as an MCP client starts it,
 * with `env` (DATABASE_URL or DATA_DIR) besides PATH and LOG_LEVEL=warn; its stderr is ignored.
 */
export async function connectStdio(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [path.join(projectRoot, 'bin/x402-tally.js'), 'mcp'],
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
      stderr: 'ignore',
    }),
    { timeout: CONNECT_TIMEOUT_MS },
  );
  return client;
}
