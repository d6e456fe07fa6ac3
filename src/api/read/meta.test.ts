import { describe, expect, it } from 'vitest';
import type { PublishedState } from '../published.ts';
import { metaBody, type MetaOfGeneration } from './meta.ts';

// A generation generated at T and published at T + 60 s; its as-of block time varies per case.
const T = Date.parse('2026-11-24T12:00:00Z');
function freshness(asOfAgoSeconds: number, nowAfterGeneratedSeconds: number) {
  const state = {
    latest: {
      generation: 7,
      generatedAt: new Date(T),
      publishedAt: new Date(T + 60_000),
      asOfTs: T / 1000 - asOfAgoSeconds,
    },
    retained: new Map(),
    version: '7',
  } as unknown as PublishedState;
  return metaBody({} as MetaOfGeneration, state, 900, T + nowAfterGeneratedSeconds * 1000).freshness;
}

describe('/meta freshness', () => {
  it('default: a new generation as of a recent block is fresh', () => {
    expect(freshness(1200, 30)).toEqual({ age_seconds: 30, as_of_lag_seconds: 1230, stale: false });
  });

  it('behavior: a generation older than two cadences is stale', () => {
    expect(freshness(0, 1801).stale).toBe(true);
    expect(freshness(0, 1800).stale).toBe(false);
  });

  it('behavior: a new generation as of an old block is stale: lag over 2 x 900 + 3600 s', () => {
    // generated 30 s ago, but its as-of block is 5,371 + 30 = 5,401 s old
    expect(freshness(5371, 30)).toEqual({ age_seconds: 30, as_of_lag_seconds: 5401, stale: true });
    expect(freshness(5370, 30)).toEqual({ age_seconds: 30, as_of_lag_seconds: 5400, stale: false });
  });
});
