import { listSellers } from './tools/directory.ts';
import { marketDaily, marketSummary, status } from './tools/market.ts';
import { topSellers } from './tools/rankings.ts';
import { searchListings } from './tools/search.ts';
import { explainMetric, getSeller } from './tools/sellers.ts';
import type { Tool } from './tools/common.ts';

/**
 * The tools of the MCP server, in the order tools/list gives them. Each family is a file of
 * ./tools/ (./tools/common.ts holds what they share: the Tool shape, the API read, the arguments).
 */
export const TOOLS: readonly Tool[] = [
  searchListings,
  listSellers,
  getSeller,
  status,
  topSellers,
  marketDaily,
  marketSummary,
  explainMetric,
];
