import { A, B, C, D } from './fixture.ts';
import { E, EXACT_PROXY, F } from './fixture3.ts';

/**
 * The seller directory's orders on test/api/fixture3.ts's generations, worked out by hand from
 * its table: the expected values of GET /api/v1/directory (test/api/directory.test.ts) and of the
 * MCP tool list_sellers over it (test/mcp/list-sellers.test.ts). Ties go by address ascending.
 */

/** Generation 4 (GEN3, method 3.0.0, the latest): every seller by each sort. */
export const DIRECTORY_BY_SORT = {
  // revenue: A (2^53 + 1), B (82 USDC), E (50), F (10), C (0.3), D (0)
  verified_revenue: [A, B, E, F, C, D],
  // payments: B 10, then A, E, F with 5 each (0xab.. < 0xe5.. < 0xf6..), C 2, D 0
  payments: [B, A, E, F, C, D],
  // payers: E 5, F 4, A and B 3 (0xab.. < 0xbc..), C 2, D 0
  payers: [E, F, A, B, C, D],
  // external: E 50 USDC, A and F 10 (0xab.. < 0xf6..), B 2, C 0.3, D 0
  external_revenue: [E, A, F, B, C, D],
};

/** Generation 2 (2.0.0), by revenue or payers: A, B, C, then four at 0: the proxy 0x4020.. < D 0xdede.. < E < F. */
export const DIRECTORY_GEN2 = [A, B, C, EXACT_PROXY, D, E, F];
