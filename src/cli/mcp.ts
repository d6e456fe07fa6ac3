import { randomBytes } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildApi } from '../api/index.ts';
import { injectClient } from '../mcp/client.ts';
import { createMcpServer } from '../mcp/server.ts';
import type { CommandContext } from './context.ts';
import { assertSchemaCurrent, untilAborted } from './serve.ts';
import { openStore } from './store.ts';

/**
 * `x402-tally mcp`: the MCP server over stdio, for an MCP client that starts it as a child
 * process. It reads the published generations through the API's own routes (not listening on any
 * port), writes only the protocol on stdout (logs stay on stderr), and ends when the client
 * closes stdin or on SIGINT/SIGTERM. Read-only, like serve.
 */
export async function mcpCommand(ctx: CommandContext): Promise<number> {
  const database = await openStore(ctx.config, { readOnly: true });
  try {
    await assertSchemaCurrent(database);
    const internalToken = randomBytes(16).toString('hex');
    const log = ctx.log.child({ stage: 'mcp' });
    const app = await buildApi(database.db, {
      rateLimitPerMinute: ctx.config.RATE_LIMIT_PER_MINUTE,
      cadenceSeconds: ctx.config.CADENCE_SECONDS,
      log,
      internalToken,
    });
    const server = createMcpServer(injectClient(app, internalToken), log);
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
    });
    await server.connect(transport);
    log.info('mcp server on stdio');
    await Promise.race([closed, untilAborted(ctx.signal)]);
    await server.close();
    await app.close();
    return 0;
  } finally {
    await database.close();
  }
}
