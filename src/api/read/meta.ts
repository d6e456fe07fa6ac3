import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Schema } from '../../db/schema.ts';
import type { Meta } from '../schemas/responses.ts';
import type { PublishedState } from '../published.ts';
import { classDefinitions, deploymentBlockOf, hasClasses } from './classes.ts';
import { isoFromUnix, servedWindow, type GenerationRow } from './generation.ts';

export const API_VERSION = '1.0.0';

/**
 * How far behind the chain head an as-of block may be and still be fresh, beyond two cadences:
 * Base's `finalized` block trails the head by about 15-25 minutes (L1 finality plus batch
 * posting), so a generation computed as of `finalized` right now is about that old already.
 */
export const FINALITY_ALLOWANCE_SECONDS = 3600;

type MetaBody = z.input<typeof Meta>;
export type MetaOfGeneration = Omit<MetaBody, 'cadence' | 'freshness' | 'generations'>;

/**
 * The listings of the generation's catalog snapshot whose payTo is an x402 contract (SPEC "x402
 * infrastructure is never a seller"; the addresses: table x402_infrastructure, migration 0035):
 * under 3.0.0 they are other_rail listings, never a seller.
 */
export async function countX402PayTo(db: Kysely<Schema>, g: GenerationRow): Promise<number> {
  const row = await db
    .selectFrom('catalog_listings')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .where('snapshot_id', '=', g.catalog_snapshot_id)
    .where('pay_to', 'in', (eb) => eb.selectFrom('x402_infrastructure').select('address'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The sources as the run recorded them, with the catalog's `x402_contract_pay_to`: the count
 * under 3.0.0 (unless the run recorded it), null before (the rule is 3.0.0's).
 */
function sourcesOf(g: GenerationRow, x402PayTo: number | null): MetaBody['sources'] {
  return (g.sources as Record<string, unknown>[]).map((source) =>
    source.name === 'catalog' ? { ...source, x402_contract_pay_to: source.x402_contract_pay_to ?? x402PayTo } : source,
  ) as MetaBody['sources'];
}

/**
 * The constants as the generation recorded them; under 3.0.0 with the batch contract's deployment
 * block (as recorded, else as configured: ./classes.ts).
 */
function constantsOf(g: GenerationRow): MetaBody['constants'] {
  const recorded = g.constants as MetaBody['constants'];
  return hasClasses(g) ? { ...recorded, batch_settlement_deployment_block: deploymentBlockOf(g) } : recorded;
}

/** Base mainnet's chain id, and the explorer of its transactions. */
export const BASE_MAINNET = { chainId: 8453, explorerUrl: 'https://basescan.org' } as const;

/**
 * /meta's `chain`: the chain id the generation recorded, and whether it is the public Base
 * mainnet: the operator says the chain read is public (`publicChain`: PUBLIC_CHAIN, false on the
 * demo and by default) and the chain id is Base mainnet's. A local chain (anvil) answers Base's
 * chain id too, so the id alone cannot tell. Only then is there an explorer URL.
 */
export function chainOf(g: GenerationRow, publicChain: boolean): MetaBody['chain'] {
  const chainId = (g.constants as { chain_id: number }).chain_id;
  const isPublic = publicChain && chainId === BASE_MAINNET.chainId;
  return { chain_id: chainId, public: isPublic, explorer_url: isPublic ? BASE_MAINNET.explorerUrl : null };
}

/** The part of /meta fixed by the generation itself (immutable; cacheable by generation). */
export async function metaOfGeneration(
  db: Kysely<Schema>,
  g: GenerationRow,
  publicChain: boolean,
): Promise<MetaOfGeneration> {
  const window = servedWindow(g);
  const v3 = hasClasses(g);
  const usdc = (g.constants as { usdc_contract: string }).usdc_contract;
  return {
    api_version: API_VERSION,
    method_version: g.method_version,
    generation: g.generation,
    generated_at: g.generated_at.toISOString(),
    as_of: { block_number: g.as_of_block, block_hash: g.as_of_block_hash, timestamp: isoFromUnix(g.as_of_ts) },
    window: { ...window, seconds: Number(g.window_seconds) },
    chain: chainOf(g, publicChain),
    constants: constantsOf(g),
    classes: v3 ? classDefinitions(usdc) : null,
    sources: sourcesOf(g, v3 ? await countX402PayTo(db, g) : null),
    digests: { catalog_sha256: g.catalog_sha256, evidence_sha256: g.evidence_sha256 as string },
  };
}

/**
 * The whole /meta body at `nowMs`: cadence and freshness describe the service, i.e. the latest
 * published generation, whichever generation is pinned; age counts from its generated_at.
 */
export function metaBody(
  fixed: MetaOfGeneration,
  state: PublishedState,
  cadenceSeconds: number,
  nowMs: number,
): MetaBody {
  const latest = state.latest!;
  const ageSeconds = Math.max(0, Math.floor((nowMs - latest.generatedAt.getTime()) / 1000));
  const asOfLagSeconds = Math.max(0, Math.floor(nowMs / 1000) - latest.asOfTs);
  // Written field by field to keep the contract's order (cadence and freshness after window).
  return {
    api_version: fixed.api_version,
    method_version: fixed.method_version,
    generation: fixed.generation,
    generated_at: fixed.generated_at,
    as_of: fixed.as_of,
    window: fixed.window,
    cadence: {
      interval_seconds: cadenceSeconds,
      next_run_expected_at: new Date(latest.publishedAt.getTime() + cadenceSeconds * 1000).toISOString(),
    },
    freshness: {
      age_seconds: ageSeconds,
      as_of_lag_seconds: asOfLagSeconds,
      stale: ageSeconds > 2 * cadenceSeconds || asOfLagSeconds > 2 * cadenceSeconds + FINALITY_ALLOWANCE_SECONDS,
    },
    chain: fixed.chain,
    constants: fixed.constants,
    classes: fixed.classes,
    sources: fixed.sources,
    digests: fixed.digests,
    generations: { latest: latest.generation, retained: [...state.retained.keys()] },
  };
}
