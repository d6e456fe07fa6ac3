// A table whose columns sort on click, Enter or Space (their headers are buttons); a column with
// a glossary key (`term`) explains its header on hover and focus.
import { compare, esc } from './lib.js';
import { headerTerm } from './terms.js';

/**
 * `columns`: [{label, key(row), html(row), num?, term?}]. The table scrolls sideways inside its
 * wrapper on a narrow screen; the wrapper is returned, the table has `id`.
 */
export function sortableTable(caption, columns, rows, id) {
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  const table = document.createElement('table');
  table.id = id;
  table.innerHTML = `<caption>${esc(caption)}</caption><thead><tr>${columns
    .map((c, i) => {
      const button = `<button type="button" data-col="${i}">${esc(c.label)}</button>`;
      return `<th scope="col"${c.num ? ' class="num"' : ''} aria-sort="none">${c.term ? headerTerm(c.term, button) : button}</th>`;
    })
    .join('')}</tr></thead><tbody></tbody>`;
  const tbody = table.querySelector('tbody');
  const render = (list) => {
    tbody.innerHTML = list
      .map((r) => `<tr>${columns.map((c) => `<td${c.num ? ' class="num"' : ''}>${c.html(r)}</td>`).join('')}</tr>`)
      .join('');
  };
  table.querySelectorAll('th button').forEach((button) => {
    button.addEventListener('click', () => {
      const col = columns[Number(button.dataset.col)];
      const th = button.parentElement;
      const dir = th.getAttribute('aria-sort') === 'descending' ? 'ascending' : 'descending';
      table.querySelectorAll('th').forEach((h) => h.setAttribute('aria-sort', 'none'));
      th.setAttribute('aria-sort', dir);
      const sign = dir === 'ascending' ? 1 : -1;
      render([...rows].sort((a, b) => sign * compare(col.key(a), col.key(b))));
    });
  });
  render(rows);
  wrap.append(table);
  return wrap;
}
