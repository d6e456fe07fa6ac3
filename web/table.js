// A table whose columns sort on click, Enter or Space (their headers are buttons); a column with
// a glossary key (`term`) explains its header on hover and focus.
import { compare, count, esc, link, short, usdc } from './lib.js';
import { headerTerm, valueTerm } from './terms.js';

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

/** The column of a seller: its display name (or short address) linking to its page, and its address. */
export function sellerColumn() {
  return {
    label: 'Seller',
    key: (r) => r.display_name ?? r.seller_address,
    html: (r) =>
      `<a href="${link({ seller: r.seller_address })}">${esc(r.display_name ?? short(r.seller_address))}</a> <span class="addr">${short(r.seller_address)}</span>`,
  };
}

/** The tier and evidence state columns of a seller row (the directory, an operator's members). */
export function stateColumns() {
  return [
    { label: 'Tier', term: 'tier', key: (r) => r.tier, html: (r) => valueTerm('tier', r.tier) },
    {
      label: 'Evidence',
      term: 'evidence_state',
      key: (r) => r.evidence_state,
      html: (r) => valueTerm('evidence_state', r.evidence_state),
    },
  ];
}

/**
 * The 30-day metric columns of a row of the API (a seller, an operator group or member), in one
 * order everywhere: revenue, external revenue (method 3.x: `v3`), the median payment (`median`,
 * for rows that have one), payments, payers. Values as served, formatted only.
 */
export function metricColumns(v3, { median = false } = {}) {
  const money = (label, term, field) => ({ label, term, num: true, key: (r) => r[field], html: (r) => usdc(r[field]) });
  return [
    money('Revenue (USDC)', 'verified_revenue', 'verified_revenue_30d_micro'),
    ...(v3 ? [money('External (USDC)', 'external_revenue', 'external_revenue_30d_micro')] : []),
    ...(median ? [money('Median (USDC)', 'median_payment', 'median_payment_30d_micro')] : []),
    { label: 'Payments', term: 'payments', num: true, key: (r) => r.payments_30d, html: (r) => count(r.payments_30d) },
    { label: 'Payers', term: 'payers', num: true, key: (r) => r.payers_30d, html: (r) => count(r.payers_30d) },
  ];
}
