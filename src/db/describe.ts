import { sql, type Kysely } from 'kysely';
import { normaliseViewDef } from './view-def.ts';

/**
 * A plain-text description of the migrated schema of the current schema (`current_schema()`), in
 * a stable order: tables (partitioned ones with their key), views with their definitions,
 * constraints, indexes, partitions with their bounds, functions with their bodies, triggers and
 * sequences. `sql/schema.txt` holds the description of what the migrations build; a test fails on
 * both backends when they drift apart (regenerate with `npm run schema:describe`), so a review
 * sees any change to the schema there.
 *
 * The text is the same on Postgres 15 and on PGlite (Postgres 17): it is read from the catalogs
 * with the functions that print SQL (format_type, pg_get_viewdef, pg_get_indexdef, ...), with
 * the schema's name taken out where Postgres qualifies a name regardless of search_path, and a
 * view's definition in one form for both versions (normaliseViewDef: 15 names the table of a
 * single-table view's columns, 16+ does not).
 */
export async function describeSchema(db: Kysely<any>): Promise<string> {
  const lines: string[] = [
    ...(await describeRelations(db)),
    '',
    ...(await describeConstraints(db)),
    '',
    ...(await describeIndexes(db)),
    '',
    ...(await describePartitions(db)),
    '',
    ...(await describeFunctions(db)),
    '',
    ...(await describeTriggers(db)),
    '',
    ...(await describeSequences(db)),
  ];
  // (a section with no rows leaves two blank lines: one is enough)
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

const RELATION_KEYWORD: Record<string, string> = {
  r: 'table',
  p: 'table',
  v: 'view',
  m: 'materialized view',
};

/**
 * One block per table, view and materialized view, in name order: its columns (type, collation
 * when not the type's default, not null, default, identity or generated expression), for a
 * partitioned table its partition key, and for a view its definition. A partition is not a block
 * of its own (its columns are its parent's): it is a line of the partitions section.
 */
async function describeRelations(db: Kysely<any>): Promise<string[]> {
  const relations = await sql<{
    name: string;
    kind: string;
    partkey: string | null;
    options: string | null;
    viewdef: string | null;
  }>`
    select c.relname as name,
           c.relkind as kind,
           case when c.relkind = 'p' then pg_get_partkeydef(c.oid) end as partkey,
           -- (a table's storage parameters, e.g. fillfactor: they decide its bytes per row)
           case when c.relkind in ('r', 'p') then array_to_string(c.reloptions, ', ') end as options,
           case when c.relkind in ('v', 'm') then pg_get_viewdef(c.oid, true) end as viewdef
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema()
       and c.relkind in ('r', 'p', 'v', 'm')
       and not c.relispartition
     order by c.relname`.execute(db);
  const columns = await sql<{
    t: string;
    c: string;
    type: string;
    collation: string | null;
    notnull: boolean;
    identity: string;
    generated: string;
    dflt: string | null;
  }>`
    select c.relname as t,
           a.attname as c,
           format_type(a.atttypid, a.atttypmod) as type,
           case when a.attcollation <> ty.typcollation then co.collname end as collation,
           a.attnotnull as notnull,
           a.attidentity as identity,
           a.attgenerated as generated,
           pg_get_expr(d.adbin, d.adrelid) as dflt
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      join pg_type ty on ty.oid = a.atttypid
      left join pg_collation co on co.oid = a.attcollation
      left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
     where n.nspname = current_schema()
       and c.relkind in ('r', 'p', 'v', 'm')
       and not c.relispartition
     order by c.relname, a.attnum`.execute(db);

  const lines: string[] = [];
  for (const r of relations.rows) {
    const key = r.partkey ? ` partition by ${r.partkey}` : '';
    const options = r.options ? ` with (${r.options})` : '';
    lines.push('', `${RELATION_KEYWORD[r.kind]} ${r.name}${key}${options}`);
    for (const col of columns.rows.filter((c) => c.t === r.name)) lines.push(`  ${columnLine(col)}`);
    if (r.viewdef !== null) lines.push('  as', ...indented(normaliseViewDef(r.viewdef), '    '));
  }
  return lines;
}

function columnLine(col: {
  c: string;
  type: string;
  collation: string | null;
  notnull: boolean;
  identity: string;
  generated: string;
  dflt: string | null;
}): string {
  let line = `${col.c} ${col.type}`;
  if (col.collation) line += ` collate "${col.collation}"`;
  if (col.notnull) line += ' not null';
  if (col.identity === 'a') line += ' generated always as identity';
  if (col.identity === 'd') line += ' generated by default as identity';
  if (col.generated === 's') line += ` generated always as (${col.dflt}) stored`;
  // (a nextval default names its sequence schema-qualified on Postgres; the sequences section lists them)
  else if (col.dflt && !col.dflt.startsWith('nextval(')) line += ` default ${col.dflt}`;
  return line;
}

/** Constraints but NOT NULL (the columns say it) and the copies a partition inherits from its parent. */
async function describeConstraints(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ t: string; name: string; def: string }>`
    select c.conrelid::regclass::text as t, c.conname as name, pg_get_constraintdef(c.oid) as def
      from pg_constraint c
      join pg_namespace n on n.oid = c.connamespace
     where n.nspname = current_schema()
       and c.contype <> 'n'  -- Postgres 17 lists NOT NULL as constraints
       and c.conparentid = 0 -- a partition's copy of its parent's key or foreign key
       and c.conislocal      -- a partition's copy of its parent's check
     order by 1, 2`.execute(db);
  return rows.map((c) => `constraint ${c.t}.${c.name}: ${c.def}`);
}

/**
 * Indexes, but not a partition's own copy of its parent's index (attached to it: pg_inherits).
 * pg_get_indexdef always names the table with its schema: the schema is taken out.
 */
async function describeIndexes(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select regexp_replace(pg_get_indexdef(i.indexrelid), ' ON (ONLY )?\\S+\\.', ' ON \\1') as def
      from pg_index i
      join pg_class ic on ic.oid = i.indexrelid
      join pg_class tc on tc.oid = i.indrelid
      join pg_namespace n on n.oid = ic.relnamespace
     where n.nspname = current_schema()
       and not exists (select 1 from pg_inherits h where h.inhrelid = i.indexrelid)
     order by tc.relname, ic.relname`.execute(db);
  return rows.map((i) => `index ${i.def}`);
}

/** Each partition with its parent and bound (a partition partitioned again also with its key). */
async function describePartitions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ child: string; parent: string; bound: string; partkey: string | null }>`
    select c.relname as child,
           p.relname as parent,
           pg_get_expr(c.relpartbound, c.oid) as bound,
           case when c.relkind = 'p' then pg_get_partkeydef(c.oid) end as partkey
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_inherits h on h.inhrelid = c.oid
      join pg_class p on p.oid = h.inhparent
     where n.nspname = current_schema()
       and c.relispartition
       and c.relkind in ('r', 'p')
     order by p.relname, c.relname`.execute(db);
  return rows.map(
    (r) => `partition ${r.child} of ${r.parent}: ${r.bound}${r.partkey ? ` partition by ${r.partkey}` : ''}`,
  );
}

const VOLATILITY: Record<string, string> = { i: 'immutable', s: 'stable', v: 'volatile' };

/** Functions and procedures: signature, result, language, volatility, then the body as written. */
async function describeFunctions(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{
    name: string;
    kind: string;
    args: string;
    result: string | null;
    lang: string;
    volatility: string;
    body: string;
  }>`
    select p.proname as name,
           p.prokind as kind,
           pg_get_function_arguments(p.oid) as args,
           pg_get_function_result(p.oid) as result,
           l.lanname as lang,
           p.provolatile as volatility,
           -- a SQL function written with BEGIN ATOMIC keeps its body parsed, not as text
           coalesce(pg_get_function_sqlbody(p.oid), p.prosrc) as body
      from pg_proc p
      join pg_namespace n on n.oid = p.pronamespace
      join pg_language l on l.oid = p.prolang
     where n.nspname = current_schema()
     order by 1, 3`.execute(db);
  const lines: string[] = [];
  for (const f of rows) {
    const head = f.kind === 'p' ? 'procedure' : 'function';
    const result = f.result ? ` returns ${f.result}` : '';
    lines.push(`${head} ${f.name}(${f.args})${result} language ${f.lang} ${VOLATILITY[f.volatility] ?? f.volatility}`);
    lines.push(...indented(f.body, '  '), '');
  }
  return lines;
}

/**
 * Triggers written in the migrations (not the internal ones of foreign keys, nor a partition's
 * copy of its parent's): table, timing, events, transition tables, level and function, as
 * Postgres prints them (pretty: names unqualified when the search path reaches them).
 */
async function describeTriggers(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ def: string }>`
    select regexp_replace(pg_get_triggerdef(t.oid, true), '^CREATE (CONSTRAINT )?TRIGGER ', '') as def
      from pg_trigger t
      join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema()
       and not t.tgisinternal
       and t.tgparentid = 0
     order by c.relname, t.tgname`.execute(db);
  return rows.map((t) => `trigger ${t.def}`);
}

async function describeSequences(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select sequence_name as name from information_schema.sequences
     where sequence_schema = current_schema() order by 1`.execute(db);
  return rows.map((s) => `sequence ${s.name}`);
}

/** The lines of a text printed by Postgres, each indented, without trailing blanks or blank ends. */
function indented(text: string, indent: string): string[] {
  const lines = text.split('\n').map((l) => l.trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.map((l) => (l === '' ? '' : `${indent}${l}`));
}
