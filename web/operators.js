// Operator groups: sellers linked by a shared resource host (the method's groups, with their sums
// as it computed them: /api/v1/operators), and one group with its members (/api/v1/operators/{id}).
import { all, api, count, esc, hasClasses, link, short, usdc } from './lib.js';
import { metricColumns, sortableTable, stateColumns } from './table.js';
import { term } from './terms.js';

const main = document.getElementById('main');

export async function operatorsView(meta, id) {
  const v3 = hasClasses(meta.method_version);
  if (id) return operatorView(v3, id);
  const groups = await all('/operators', 'groups', { limit: '100' });
  main.innerHTML = `<h2>${term('operator_group', 'Operator groups')}</h2>
    <p>Sellers that share a resource host, linked transitively: likely one operator paid at several addresses. Their sums are the method's: payers are counted once across the group.</p>
    <p id="operators-count">${count(groups.length)} groups</p>`;
  const columns = [
    {
      label: 'Group',
      key: (g) => g.id,
      html: (g) => `<a href="${link({ view: 'operators', operator: g.id })}">${esc(g.id.slice(0, 13))}…</a>`,
    },
    { label: 'Sellers', num: true, key: (g) => g.seller_count, html: (g) => count(g.seller_count) },
    { label: 'Hosts', key: (g) => g.hosts.join(' '), html: (g) => esc(g.hosts.join(', ')) },
    ...metricColumns(v3),
  ];
  main.append(sortableTable('Operator groups, by revenue', columns, groups, 'operators'));
}

async function operatorView(v3, id) {
  const g = await api(`/operators/${encodeURIComponent(id)}`);
  main.innerHTML = `<h2>${term('operator_group')} <span class="addr">${esc(g.id)}</span></h2>
    <dl id="operator-figures">
      <dt>Hosts</dt><dd>${esc(g.hosts.join(', '))}</dd>
      <dt>${term('verified_revenue')}</dt><dd data-metric="revenue">${usdc(g.verified_revenue_30d_micro)} USDC</dd>
      ${v3 ? `<dt>${term('external_revenue')}</dt><dd data-metric="external-revenue">${usdc(g.external_revenue_30d_micro)} USDC</dd>` : ''}
      <dt>${term('payments')}</dt><dd data-metric="payments">${count(g.payments_30d)}</dd>
      <dt>${term('payers')}</dt><dd data-metric="payers">${count(g.payers_30d)}</dd>
    </dl>`;
  const columns = [
    {
      label: 'Seller',
      key: (m) => m.seller_address,
      html: (m) => `<a href="${link({ seller: m.seller_address })}">${short(m.seller_address)}</a>`,
    },
    ...stateColumns(),
    ...metricColumns(v3),
  ];
  main.append(sortableTable('Members', columns, g.members, 'members'));
}
