import { z } from 'zod';
import { DirectoryPage } from '../../api/schemas/directory.ts';
import { category, cursor, generation, limit, read, searchText, type Tool } from './common.ts';

/** search_listings: the listing search of the catalog (`GET /api/v1/sellers?q=`). */
export const searchListings: Tool = {
  name: 'search_listings',
  description:
    'Full-text search of the x402 Bazaar listings (title, description, resource URL): listings holding every word of query, best ' +
    "match first. Each row carries its seller's verified 30-day numbers (seller-attributed). Use verified_only to keep sellers " +
    'whose revenue is verified on chain.',
  input: z.strictObject({
    query: searchText('words to search for; a listing must hold all of them'),
    category,
    verified_only: z.boolean().optional().describe('only listings of sellers of tier verified'),
    limit: limit(50, 50),
    cursor,
    generation,
  }),
  output: DirectoryPage,
  call: (api, a) =>
    read(api, '/sellers', {
      q: a.query,
      category: a.category,
      tier: a.verified_only ? 'verified' : undefined,
      limit: a.limit,
      cursor: a.cursor,
      generation: a.generation,
    }),
};
