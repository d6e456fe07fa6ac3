import { z } from 'zod';
import { DAY_MAX, DAY_MIN } from '../../api/schemas/query.ts';
import { MarketDaily, Meta } from '../../api/schemas/responses.ts';
import { MarketSummary } from '../../api/schemas/groups.ts';
import { day, generation, read, type Tool } from './common.ts';

/** The tools about the whole market and the data behind it: status, market_daily, market_summary. */

export const status: Tool = {
  name: 'status',
  description:
    'How current the numbers are: the latest published generation, its method version, as-of block and window, its age and whether ' +
    'it is stale, the cadence of runs and when the next is expected, and the retained generations any tool can be pinned to.',
  input: z.strictObject({}),
  output: Meta.pick({
    generation: true,
    method_version: true,
    generated_at: true,
    as_of: true,
    window: true,
    cadence: true,
    freshness: true,
    generations: true,
  }),
  call: async (api) => {
    const meta = await read(api, '/meta');
    const { generation, method_version, generated_at, as_of, window, cadence, freshness, generations } = meta;
    return { generation, method_version, generated_at, as_of, window, cadence, freshness, generations };
  },
};

export const marketDaily: Tool = {
  name: 'market_daily',
  description:
    'The daily market aggregate of verified x402 payments: volume, payments, payers, sellers paid, median payment; newest day first.',
  input: z.strictObject({
    from: day.optional().describe(`first day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})`),
    to: day.optional().describe(`last day, inclusive (YYYY-MM-DD, ${DAY_MIN} to ${DAY_MAX})`),
    generation,
  }),
  output: MarketDaily,
  call: (api, a) => read(api, '/market/daily', { from: a.from, to: a.to, generation: a.generation }),
};

export const marketSummary: Tool = {
  name: 'market_summary',
  description:
    'The market over the last 7 publishable days, the 7 before and the last 30: payments, volume, distinct payers and sellers paid (distinct over each period), and the change of the last 7 days against the 7 before. computed is false for a generation made before the summary existed.',
  input: z.strictObject({ generation }),
  output: MarketSummary,
  call: (api, a) => read(api, '/market/summary', { generation: a.generation }),
};
