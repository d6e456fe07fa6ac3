import { z } from 'zod';
import { DIRECTORY_SORTS } from '../../api/cursor.ts';
import { explain, GLOSSARY } from '../../api/glossary.ts';
import { CLASSES } from '../../api/read/classes.ts';
import { SellerDirectoryPage } from '../../api/schemas/directory.ts';
import { category, cursor, generation, limit, read, searchText, SELLER_LABELS, type Tool } from './common.ts';

/**
 * list_sellers: the seller directory (`GET /api/v1/directory`, the seller grain): every seller of
 * the generation, verified or not, with the same sort, filters, q and cursor as the API.
 */

/**
 * Sellers of a page by default, and at most: a directory row is about 550 bytes of JSON, so the
 * default page stays near 11 KB for an agent's context (the API's own default is 50, its most 100).
 */
const DEFAULT_ROWS = 20;
const MAX_ROWS = 50;

export const listSellers: Tool = {
  name: 'list_sellers',
  description:
    'The directory of every seller of the generation, verified or not (one row per seller address), with its 30-day numbers, ' +
    'evidence state, tier, rank, farm flag, evidence classes and operator group: sorted by sort, filtered by category, ' +
    'evidence_state, farm_flag and class, searched by query; total counts every seller that passes. For one seller in full, ' +
    `use get_seller.${SELLER_LABELS} ${explain('operator_group')}`,
  input: z.strictObject({
    sort: z
      .enum(DIRECTORY_SORTS)
      .optional()
      .describe(
        'the order, descending, ties by seller_address ascending; a seller without the number comes last, and a cursor ' +
          `continues only the sort and filters it came from. verified_revenue (default): ${GLOSSARY.verified_revenue.text} ` +
          `external_revenue (method 3.0.0 generations only): ${GLOSSARY.external_revenue.text} payments: ` +
          `${GLOSSARY.payments.text} payers: ${GLOSSARY.payers.text}`,
      ),
    category: category.describe('only sellers with at least one listing in this category'),
    evidence_state: z
      .enum(['verified', 'insufficient', 'not_observed'])
      .optional()
      .describe(`only sellers in this evidence state. ${explain('evidence_state')}`),
    farm_flag: z
      .literal([0, 1])
      .optional()
      .describe(`1: only sellers flagged as a possible farm; 0: only sellers not flagged. ${explain('farm_flag')}`),
    class: z
      .enum(CLASSES)
      .optional()
      .describe(
        `only sellers with at least one verified payment of this class in the window (method 3.0.0 generations only). ` +
          `${explain('class')} ${CLASSES.map((c) => `${c}: ${GLOSSARY[`class.${c}`].text}`).join(' ')}`,
      ),
    query: searchText(
      'the sellers with a listing that search_listings finds for these words (plurals and prefixes included), and, when ' +
        'query is an address or its start (6 to 40 hex digits, with or without 0x), the sellers whose address starts with it; ' +
        'the order stays that of sort',
    ).optional(),
    limit: limit(MAX_ROWS, DEFAULT_ROWS),
    cursor,
    generation,
  }),
  output: SellerDirectoryPage,
  call: (api, a) =>
    read(api, '/directory', {
      sort: a.sort,
      category: a.category,
      evidence_state: a.evidence_state,
      farm_flag: a.farm_flag,
      class: a.class,
      q: a.query,
      limit: a.limit ?? DEFAULT_ROWS,
      cursor: a.cursor,
      generation: a.generation,
    }),
};
