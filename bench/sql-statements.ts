/**
 * A method step file's statements, for the benchmarks that time them one by one (bench/method.ts
 * SPLIT_STEPS=1, bench/method-tiny.ts STATEMENTS=1): split at `;` and a line end (a statement may
 * end with `; -- comment`: that is its end too), except inside a dollar-quoted body (`do $$ ... $$;`,
 * whose lines end with `;` too): a piece with an odd count of `$$` is joined with the next. Pieces
 * holding only comments are left out.
 */
export function statements(text: string): string[] {
  const out: string[] = [];
  let open = '';
  for (const piece of text.split(/;[ \t]*(?:--[^\n]*)?\n/)) {
    open = open ? `${open};\n${piece}` : piece;
    if ((open.match(/\$\$/g) ?? []).length % 2 === 0) {
      out.push(open);
      open = '';
    }
  }
  if (open) out.push(open);
  return out.filter((q) => /\S/.test(q.replace(/--.*$/gm, '')));
}

/** A statement's first line of code (comments left out), cut to `width` characters: its name in a profile. */
export function firstLine(statement: string, width: number): string {
  return statement.replace(/--.*$/gm, '').trim().split('\n')[0]!.slice(0, width);
}
