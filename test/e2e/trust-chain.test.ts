import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.ts';
import {
  buyerAccount,
  deployUsdc,
  fund,
  latestBlock,
  mine,
  settle,
  startAnvil,
  type AnvilInstance,
  type UsdcDeployment,
} from '../../src/devchain/index.ts';
import { startFaultProxy, type FaultProxy } from '../chain/fault-proxy.ts';
import { targetsFor, tally, usdc, writeOneSellerCatalog, type Target } from '../helpers/e2e.ts';

/**
 * Issue 12, findings 1 and 2: a wrong chain, a provider that goes back in time, and an operator's
 * older as-of never change the live generation. Real anvil nodes running Circle's USDC; a fault
 * proxy in front of one of them lies about `finalized`. On PGlite and on Postgres.
 */
const S1 = '0x5e11e50000000000000000000000000000000001' as Address;

let base: AnvilInstance; // chain 8453, the real one
let otherChain: AnvilInstance; // chain id 1
let otherHistory: AnvilInstance; // chain id 8453, but another history
let proxy: FaultProxy;
let dep: UsdcDeployment;
let dir: string;
const targets: Target[] = [];

/** What the database holds: generations by number, the live one, and rolled-back blocks. */
async function stateOf(target: Target) {
  const database = target.database ?? (await openDatabase({ dataDir: String(target.env.DATA_DIR) }));
  try {
    const generations = await database.db
      .selectFrom('generations')
      .select(['generation', 'status', 'as_of_block'])
      .orderBy('generation')
      .execute();
    const pointer = await database.db.selectFrom('published_pointer').select('generation').executeTakeFirst();
    const removed = await database.db
      .selectFrom('blocks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('removed_seq', 'is not', null)
      .executeTakeFirstOrThrow();
    return {
      generations: generations.map((g) => ({ ...g, as_of_block: BigInt(g.as_of_block) })),
      live: pointer?.generation,
      removedBlocks: Number(removed.n),
    };
  } finally {
    if (!target.database) await database.close();
  }
}

beforeAll(async () => {
  // finalized = latest - 2 (slotsInAnEpoch 1), so a run in `finalized` mode sees new blocks quickly.
  base = await startAnvil({ slotsInAnEpoch: 1 });
  otherChain = await startAnvil({ chainId: 1, slotsInAnEpoch: 1 });
  otherHistory = await startAnvil({ slotsInAnEpoch: 1 });
  dep = await deployUsdc(base.url);
  for (const n of [0, 1, 2]) await fund(dep, buyerAccount(n).address, usdc(100));
  for (const n of [0, 1, 2]) await settle(dep, { from: buyerAccount(n), to: S1, value: usdc(1 + n) });
  await mine(base.url, 5);
  // Same chain id, another history, and higher: a node on another network (or a fork) posing as Base.
  await mine(otherHistory.url, Number((await latestBlock(base.url)).number) + 50);
  proxy = await startFaultProxy(base.url);

  dir = mkdtempSync(path.join(os.tmpdir(), 'tally-trust-'));
  writeOneSellerCatalog(path.join(dir, 'catalog.json'), S1);
  const common = { RPC_URL: proxy.url, CATALOG_SOURCE: path.join(dir, 'catalog.json'), LOG_LEVEL: 'silent' };
  targets.push(...(await targetsFor(common, path.join(dir, 'data'))));
  for (const target of targets) {
    const { code, out } = await tally(['run'], target.env);
    expect(code, out).toBe(0);
    expect(out).toContain('published generation 1');
  }
});

afterAll(async () => {
  await proxy?.close();
  for (const node of [base, otherChain, otherHistory]) await node?.stop();
  for (const t of targets) await t.database?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a wrong chain never replaces the live generation (finding 1)', () => {
  it('error: an RPC_URL of chain 1 is a configuration error (exit 1) naming the URL and both ids; nothing rolled back', async () => {
    for (const target of targets) {
      const before = await stateOf(target);
      // Behind a proxy that takes any path, as providers with a key in the path do.
      const keyed = await startFaultProxy(otherChain.url);
      const { code, out } = await tally(['run'], { ...target.env, RPC_URL: `${keyed.url}/v2/SECRETKEY` }).finally(() =>
        keyed.close(),
      );
      expect(code, out).toBe(1);
      expect(out).toContain(`RPC_URL ${keyed.url}/… serves chain id 1, but CHAIN_ID is 8453`);
      expect(out).not.toContain('SECRETKEY');
      expect(await stateOf(target)).toEqual(before);
      expect(before.removedBlocks).toBe(0);
    }
  });

  it('error: a fallback URL of another chain is caught when the run falls over to it', async () => {
    const target = targets[0]!;
    const before = await stateOf(target);
    // The first URL refuses connections (port 1): the client falls over to the second, of chain 1.
    const { code, out } = await tally(['run'], { ...target.env, RPC_URL: `http://127.0.0.1:1,${otherChain.url}` });
    expect(code, out).toBe(1);
    expect(out).toContain('serves chain id 1, but CHAIN_ID is 8453');
    expect(await stateOf(target)).toEqual(before);
  });

  it('error: a node of the same chain id whose chain parts from ours below the live as-of is a fault (exit 75), not a reorg', async () => {
    for (const target of targets) {
      const before = await stateOf(target);
      const { code, out } = await tally(['run'], { ...target.env, RPC_URL: otherHistory.url });
      expect(code, out).toBe(75);
      expect(out).toMatch(/parts from the stored one at block \d+, at or below block \d+, which was final/);
      expect(await stateOf(target)).toEqual(before);
      expect((await stateOf(target)).removedBlocks).toBe(0);
    }
  });
});

describe('the live generation never goes back in time (finding 2)', () => {
  it('error: a provider whose finalized block goes back is a temporary fault (exit 75); nothing published', async () => {
    await mine(base.url, 3);
    for (const target of targets) {
      const before = await stateOf(target);
      const liveBlock = before.generations.find((g) => g.generation === before.live)!.as_of_block;
      // The proxy answers `finalized` with a block 2 below the live generation's as-of block.
      proxy.rewrite = (method, params) =>
        method === 'eth_getBlockByNumber' && params[0] === 'finalized'
          ? [`0x${(liveBlock - 2n).toString(16)}`, ...params.slice(1)]
          : params;
      try {
        const { code, out } = await tally(['run'], target.env);
        expect(code, out).toBe(75);
        expect(out).toContain(
          `the node's finalized block is ${liveBlock - 2n}, below block ${liveBlock} of the live generation ${before.live}`,
        );
      } finally {
        proxy.rewrite = undefined;
      }
      expect(await stateOf(target)).toEqual(before);
    }
  });

  it('behavior: an explicit older AS_OF_BLOCK is published as pinnable; the live generation stays; --make-latest moves it', async () => {
    for (const target of targets) {
      const before = await stateOf(target);
      const live = before.generations.find((g) => g.generation === before.live)!;
      const older = live.as_of_block - 1n;
      const pinned = await tally(['run', '--as-of-block', String(older)], target.env);
      expect(pinned.code, pinned.out).toBe(0);
      expect(pinned.out).toContain('as pinnable only');
      const after = await stateOf(target);
      expect(after.live).toBe(before.live);
      const added = after.generations.at(-1)!;
      expect(added).toMatchObject({ status: 'published', as_of_block: older });
      expect(added.generation).toBeGreaterThan(live.generation);

      const moved = await tally(['run', '--as-of-block', String(older), '--make-latest'], target.env);
      expect(moved.code, moved.out).toBe(0);
      const last = await stateOf(target);
      expect(last.live).toBe(last.generations.at(-1)!.generation);
      expect(last.generations.at(-1)!.as_of_block).toBe(older);
    }
  });
});
