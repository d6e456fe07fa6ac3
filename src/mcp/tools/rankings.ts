import { z } from 'zod';
import { RANKING_SORTS } from '../../api/schemas/query.ts';
import { RankingsPage } from '../../api/schemas/directory.ts';
import { category, cursor, generation, limit, read, type Tool } from './common.ts';

/** top_sellers: the ranking of verified sellers (`GET /api/v1/rankings`). */
export const topSellers: Tool = {
  name: 'top_sellers',
  description:
    'Verified sellers ranked by verified 30-day revenue (descending), optionally within one category; with sort external_revenue ' +
    '(method 3.0.0 generations), by external revenue: what buyers other than the seller itself paid.',
  input: z.strictObject({
    sort: z
      .enum(RANKING_SORTS)
      .optional()
      .describe(
        'verified_revenue (default) or external_revenue (method 3.0.0 generations only): the order, and the rank given; ' +
          'a cursor continues only the order it came from',
      ),
    category,
    limit: limit(500, 100),
    cursor,
    generation,
  }),
  output: RankingsPage,
  call: (api, a) =>
    read(api, '/rankings', {
      sort: a.sort,
      category: a.category,
      limit: a.limit,
      cursor: a.cursor,
      generation: a.generation,
    }),
};
