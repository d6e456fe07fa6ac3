/**
 * A view's definition as `pg_get_viewdef(oid, true)` prints it, in the same text on Postgres 15
 * and on Postgres 16+ (PGlite is 17).
 *
 * The one difference between them: Postgres 16 dropped the two placeholder range-table entries
 * (OLD and NEW) that every view's query carried, and the deparser names columns without their
 * table when a query has a single range-table entry. So a view over ONE relation (no join, no
 * UNION) prints `t.value > 0` on 15 and `value > 0` on 16+; views with joins or unions, and
 * every subquery inside a view (its outer query is in scope), print the same on both.
 *
 * This function brings the 15 form to the 16+ form: when the top level of the definition selects
 * from a single FROM item, the qualifier of that item is taken off the names of the top level
 * (not inside subqueries). Text it does not recognise (WITH, set operations, several FROM items)
 * is returned as is: a definition that still differed would fail the schema test on one backend.
 */
export function normaliseViewDef(def: string): string {
  const scan = scanTopLevel(def);
  if (scan === undefined || /^\s*WITH\b/.test(def)) return def;
  if (/\b(UNION|INTERSECT|EXCEPT)\b/.test(scan.flat)) return def;
  const from = /\bFROM\b([\s\S]*?)(?=\b(WHERE|GROUP BY|HAVING|WINDOW|ORDER BY|LIMIT|OFFSET|FETCH|FOR)\b|;|$)/.exec(
    scan.flat,
  );
  if (!from) return def;
  const item = from[1]!.trim();
  if (item === '' || /\bJOIN\b|,/.test(item)) return def;
  // `table`, `table alias`, `(subquery) alias`, `function(...) alias(columns)` (the parenthesised
  // parts are blank here): the last word names it
  const alias = /("[^"]+"|[a-z_][a-z0-9_$]*)$/.exec(item)?.[1];
  if (alias === undefined) return def;
  const prefix = `${alias}.`;
  let out = '';
  for (let i = 0; i < def.length; i++) {
    const atName = scan.topLevel[i] && def.startsWith(prefix, i) && !/[\w$."]/.test(def[i - 1] ?? ' ');
    if (atName) i += prefix.length - 1;
    else out += def[i];
  }
  return out;
}

/**
 * For each character of `def`: whether it is code of the top-level query (outside string
 * literals, quoted names and subqueries), and the top level's text with every parenthesised part
 * blanked (so keywords inside function calls, such as `extract(epoch FROM ...)`, are not seen).
 */
function scanTopLevel(def: string): { topLevel: boolean[]; flat: string } | undefined {
  const topLevel: boolean[] = [];
  let flat = '';
  const parens: boolean[] = []; // for each open parenthesis: does it open a subquery?
  let quote: string | undefined;
  for (let i = 0; i < def.length; i++) {
    const ch = def[i]!;
    const inSubquery = parens.includes(true);
    if (quote !== undefined) {
      if (ch === quote) quote = def[i + 1] === quote ? (i++, topLevel.push(false), quote) : undefined;
      topLevel.push(false);
      flat += ' ';
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    if (ch === '(') parens.push(/^\(\s*(SELECT|VALUES|WITH)\b/.test(def.slice(i, i + 12)));
    if (ch === ')' && parens.pop() === undefined) return undefined;
    topLevel.push(!inSubquery && quote === undefined);
    flat += parens.length === 0 && ch !== ')' ? ch : ' ';
  }
  return quote === undefined && parens.length === 0 ? { topLevel, flat } : undefined;
}
