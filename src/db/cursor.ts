import { CompiledQuery, type Kysely } from 'kysely';
import type { Schema } from './schema.ts';

/**
 * The rows of one SELECT, `pageSize` at a time, read through a server-side cursor in a read-only
 * transaction (the same SQL on pg and on the embedded PGlite): memory holds one page whatever the
 * size of the result, and the database runs the query once (paging by key would re-run it per
 * page). Pages are fetched as the caller asks for them, so a slow consumer slows the reads.
 *
 * The transaction holds a connection (on PGlite: the only one) until the last page is read or
 * the caller stops iterating (`return` or `throw`: the transaction is rolled back, which closes the
 * cursor, and the connection is released). Rows are parsed as every other query's are.
 */
export async function* pagesOf<R>(
  db: Kysely<Schema>,
  compiled: CompiledQuery<R>,
  pageSize: number,
): AsyncGenerator<R[]> {
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  try {
    // DECLARE takes the query's parameters through the extended protocol on both backends.
    await trx.executeQuery(
      CompiledQuery.raw(`declare pages_of no scroll cursor for ${compiled.sql}`, [...compiled.parameters]),
    );
    for (;;) {
      const { rows } = await trx.executeQuery<R>(CompiledQuery.raw(`fetch forward ${pageSize} from pages_of`));
      if (rows.length > 0) yield rows;
      if (rows.length < pageSize) break;
    }
  } finally {
    // Read-only: rollback and commit are the same; rollback releases the connection even when the
    // connection itself failed (Kysely), and never hides the error that ended the iteration.
    await trx
      .rollback()
      .execute()
      .catch(() => {});
  }
}
