import type { z } from 'zod';
import type { Meta } from '../schemas/responses.ts';
import type { PublishedState } from '../published.ts';
import { isoFromUnix, windowOf, type GenerationRow } from './generation.ts';

export const API_VERSION = '1.0.0';

/**
 * How far behind the chain head an as-of block may be and still be fresh, beyond two cadences:
 * Base's `finalized` block trails the head by about 15-25 minutes (L1 finality plus batch
 * posting), so a generation computed as of `finalized` right now is about that old already.
 */
export const FINALITY_ALLOWANCE_SECONDS = 3600;

type MetaBody = z.input<typeof Meta>;
export type MetaOfGeneration = Omit<MetaBody, 'cadence' | 'freshness' | 'generations'>;

/** The part of /meta fixed by the generation itself (immutable; cacheable by generation). */
export function metaOfGeneration(g: GenerationRow): MetaOfGeneration {
  const window = windowOf(g);
  return {
    api_version: API_VERSION,
    method_version: g.method_version,
    generation: g.generation,
    generated_at: g.generated_at.toISOString(),
    as_of: { block_number: g.as_of_block, block_hash: g.as_of_block_hash, timestamp: isoFromUnix(g.as_of_ts) },
    window: { ...window, seconds: Number(g.window_seconds) },
    constants: g.constants as MetaBody['constants'],
    sources: g.sources as MetaBody['sources'],
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
    constants: fixed.constants,
    sources: fixed.sources,
    digests: fixed.digests,
    generations: { latest: latest.generation, retained: [...state.retained.keys()] },
  };
}
