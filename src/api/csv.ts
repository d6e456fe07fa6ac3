import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * CSV for people (SPEC 4, additions): `?format=csv` or `Accept: text/csv` on the directory and the
 * rankings streams every row of the generation (not one page), with a header line. Integers are
 * written digit for digit from bigints (exact above 2^53); null is an empty field; a list
 * (categories) is its items joined by `;`. Written by csv-stringify (RFC 4180 quoting).
 */
export function wantsCsv(request: FastifyRequest, format: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  const accept = String(request.headers.accept ?? '');
  return /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/** Streams `rows` (every page of a generation, read lazily) as CSV with the given columns. */
export function sendCsv(
  reply: FastifyReply,
  filename: string,
  columns: readonly string[],
  rows: AsyncIterable<Record<string, unknown>>,
): FastifyReply {
  const csv = stringify({
    header: true,
    columns: [...columns],
    cast: {
      bigint: (v) => v.toString(),
      boolean: (v) => (v ? 'true' : 'false'),
      object: (v) => (Array.isArray(v) ? v.join(';') : JSON.stringify(v)),
    },
  });
  Readable.from(rows).pipe(csv);
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(csv);
}
