import type { IncomingHttpHeaders } from 'node:http';
import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';

/**
 * CSV for people (SPEC 4, additions): `?format=csv` or `Accept: text/csv` on the directory and the
 * rankings streams every row of the generation (not one page), with a header line. Integers are
 * written digit for digit from bigints (exact above 2^53); null is an empty field; a list
 * (categories) is its items joined by `;`. Written by csv-stringify (RFC 4180 quoting).
 */
export function wantsCsv(request: { readonly headers: IncomingHttpHeaders }, format: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  const accept = String(request.headers.accept ?? '');
  return /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/** What one CSV download is: its file name, its columns in order, and which of them are catalog text. */
export interface CsvTable {
  readonly filename: string;
  readonly columns: readonly string[];
  /**
   * Columns whose text comes from the catalog (titles, descriptions, URLs, ...), written by
   * anyone who lists a resource: each such cell is neutralised against formula injection
   * (neutraliseCell). Integer and method-made columns are written as they are.
   */
  readonly catalogText: readonly string[];
}

// The characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A catalog text cell as a spreadsheet must show it: text beginning with `=`, `+`, `-`, `@`, tab
 * or carriage return gets a leading `'`, so Excel, LibreOffice and Google Sheets show it as text
 * instead of evaluating it (`=HYPERLINK(...)`, `+cmd|' /C calc'!A0`). Other text is unchanged.
 */
export function neutraliseCell(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * Streams `rows` (every page of a generation, read lazily) as CSV.
 *
 * The first row is read before anything is sent, so a failure of the first page (a database
 * error, a backend that went away) is thrown here and answered by the API's error handler as a
 * normal JSON error. Once the first row is read the answer is a 200 CSV; a later failure is
 * logged and the connection is aborted without the final chunk, so the client sees a truncated
 * download that fails, never a file that looks complete. Either way the process keeps serving.
 */
export async function sendCsv(
  reply: FastifyReply,
  table: CsvTable,
  rows: AsyncIterable<Record<string, unknown>>,
): Promise<FastifyReply> {
  const iterator = rows[Symbol.asyncIterator]();
  const first = await iterator.next();

  const catalogText = new Set(table.catalogText);
  const text = (value: string, column: unknown) => (catalogText.has(String(column)) ? neutraliseCell(value) : value);
  const csv = stringify({
    header: true,
    columns: [...table.columns],
    cast: {
      bigint: (v) => v.toString(),
      boolean: (v) => (v ? 'true' : 'false'),
      string: (v, context) => text(v, context.column),
      object: (v, context) => (Array.isArray(v) ? text(v.join(';'), context.column) : JSON.stringify(v)),
    },
  });
  // pipeline, not pipe: an error of the row reader must reach a handler (with .pipe it was
  // emitted on a stream without one, and ended the process).
  pipeline(Readable.from(continueFrom(first, iterator)), csv, (error) => {
    if (!error) return;
    // The client closing the download early is not a failure of the server.
    if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return;
    reply.log.error({ err: error, url: reply.request.url }, 'CSV download aborted after its first row');
    // Abort here as well as in Fastify's stream handling: with compression the first bytes may
    // still sit in the compressor, and an error answer must not follow a committed 200 CSV.
    if (!reply.raw.destroyed) reply.raw.destroy();
  });
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${table.filename}"`)
    .send(csv);
}

/** The rows of `rest` preceded by `first` (already read); stops the reader when the stream stops early. */
async function* continueFrom<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    if (first.done) return;
    yield first.value;
    for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
  } finally {
    await rest.return?.();
  }
}
