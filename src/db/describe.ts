import { sql, type Kysely } from 'kysely';

/**
 * A plain-text description of the migrated schema (tables, columns, constraints, indexes, views,
 * sequences), in a stable order. `sql/schema.txt` holds the description of what the migrations
 * build; a test fails when they drift apart (regenerate with `npm run schema:describe`).
 */
export async function describeSchema(db: Kysely<any>): Promise<string> {
  const columns = await sql<{ t: string; c: string; type: string; nullable: string; dflt: string | null }>`
    select table_name as t, column_name as c, data_type as type, is_nullable as nullable, column_default as dflt
      from information_schema.columns
     where table_schema = current_schema()
     order by table_name, ordinal_position`.execute(db);
  const constraints = await sql<{ t: string; name: string; def: string }>`
    select c.conrelid::regclass::text as t, c.conname as name, pg_get_constraintdef(c.oid) as def
      from pg_constraint c
      join pg_namespace n on n.oid = c.connamespace
     where n.nspname = current_schema()
       and c.contype <> 'n'  -- Postgres 17 lists NOT NULL as constraints; the columns say it already
     order by 1, 2`.execute(db);
  const indexes = await sql<{ t: string; def: string }>`
    select tablename as t, regexp_replace(indexdef, ' ON \\S+\\.', ' ON ') as def
      from pg_indexes
     where schemaname = current_schema()
     order by tablename, indexname`.execute(db);
  const sequences = await sql<{ name: string }>`
    select sequence_name as name from information_schema.sequences
     where sequence_schema = current_schema() order by 1`.execute(db);
  const lines: string[] = [];
  let table = '';
  for (const col of columns.rows) {
    if (col.t !== table) {
      table = col.t;
      lines.push('', `table ${table}`);
    }
    const dflt = col.dflt && !col.dflt.startsWith('nextval(') ? ` default ${col.dflt}` : '';
    lines.push(`  ${col.c} ${col.type}${col.nullable === 'NO' ? ' not null' : ''}${dflt}`);
  }
  lines.push('');
  for (const c of constraints.rows) lines.push(`constraint ${c.t}.${c.name}: ${c.def}`);
  lines.push('');
  for (const i of indexes.rows) lines.push(`index ${i.def}`);
  lines.push('');
  for (const s of sequences.rows) lines.push(`sequence ${s.name}`);
  return `${lines.join('\n').trim()}\n`;
}
