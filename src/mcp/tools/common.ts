import { z } from 'zod';
import { cursorOf, dayOf, INT4_MAX, isStorableText, NOT_STORABLE, SEARCH_MAX_CHARS } from '../../api/schemas/query.ts';
import { Category } from '../../api/schemas/common.ts';
import { explain } from '../../api/glossary.ts';
import { TallyError } from '../../lib/errors.ts';
import { parseJsonLossless } from '../../lib/json.ts';
import type { ApiClient } from '../client.ts';

/**
 * What the tools of the MCP server share (../tools.ts assembles them, one file per family): the
 * Tool shape, the failure a tool reports, the read of one API URL, and the arguments several
 * tools take. Each tool reads the public API (through an ApiClient) and returns what it
 * answered: the server computes no number of its own. Inputs are zod schemas of JSON values
 * built from the API's own parameter rules; outputs are the API's response schemas.
 */

/** A failure a tool reports to its caller: the API's error code and a message naming the argument. */
export class ToolFailure extends TallyError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodObject;
  readonly output: z.ZodObject;
  /** Returns the result as exact JSON values (bigint above 2^53). */
  readonly call: (api: ApiClient, args: any) => Promise<Record<string, unknown>>;
}

export const generation = z
  .int()
  .min(1)
  .max(INT4_MAX)
  .optional()
  .describe(
    'a retained published generation to read (default: the latest published); see generations.retained of /api/v1/meta',
  );
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a seller address: 0x followed by 40 hex digits')
  .describe('the seller: the address it is paid at, 0x + 40 hex digits, any case');
export const category = Category.optional().describe('only this category of the catalog');
export const limit = (max: number, fallback: number) =>
  z.int().min(1).max(max).optional().describe(`rows, 1..${max}, default ${fallback}`);
export const day = dayOf(z.string());
export const cursor = cursorOf(z.string()).optional().describe('next_cursor of the previous result');

/** The text of a search (`q` of the API), as a tool argument: `what` says what it finds. */
export const searchText = (what: string) =>
  z
    .string()
    .refine(isStorableText, NOT_STORABLE)
    // UTF-16 units, not characters as the API counts (q): at most 200 * 9 characters percent-encoded, so
    // the API's URL stays under its 2048 (200 characters of 4 UTF-8 bytes would be a 414 there).
    .max(SEARCH_MAX_CHARS, `must be at most ${SEARCH_MAX_CHARS} characters`)
    .refine((s) => /[\p{L}\p{N}]/u.test(s), 'must contain at least one letter or digit')
    .describe(what);

/** The labels of a seller, as the descriptions of the tools that return sellers explain them. */
export const SELLER_LABELS = ` ${explain('evidence_state')} ${explain('tier')} ${explain('farm_flag')}`;

/** The tool argument behind each API parameter whose name differs (a 400 names the parameter). */
const ARGUMENT_OF = new Map([
  ['q', 'query'],
  ['tier', 'verified_only'],
  ['slug', 'address'],
]);

/**
 * GETs one API URL; an API error becomes a ToolFailure with the API's code and message, the
 * parameter a 400 names put in the words of the tool's arguments (`q: ...` -> `query: ...`).
 */
export async function read(
  api: ApiClient,
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<Record<string, any>> {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  const answer = await api(`/api/v1${path}${qs ? `?${qs}` : ''}`);
  const body = parseJsonLossless(answer.text) as Record<string, any>;
  if (answer.status !== 200) {
    const error = body?.error ?? { code: 'internal_error', message: `the API answered ${answer.status}` };
    const message = String(error.message);
    const named = answer.status === 400 ? /^(\w+): ([\s\S]*)$/.exec(message) : null;
    const argument = named ? ARGUMENT_OF.get(named[1]!) : undefined;
    throw new ToolFailure(String(error.code), argument ? `${argument}: ${named![2]}` : message);
  }
  return body;
}
