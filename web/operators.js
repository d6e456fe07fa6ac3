// Operator groups: sellers linked by a shared resource host (the method's groups, with their sums
// as it computed them: /api/v1/operators), and one group with its members (/api/v1/operators/{id}).
import { all, api, count, esc, hasClasses, link, short, usdc } from './lib.js';
import { sortableTable } from './table.js';
import { term, valueTerm } from './terms.js';

const main = document.getElementById('main');

/** The money and count columns a group and a member share. */
function figureColumns(v3) {
  return [
    {
      label: 'Revenue (USDC)',
      term: 'verified_revenue',
      num: true,
      key: (r) => r.verified_revenue_30d_micro,
      html: (r) => usdc(r.verified_revenue_30d_micro),
    },
    ...(v3
      ? [
          {
            label: 'External (USDC)',
            term: 'external_revenue',
            num: true,
            key: (r) => r.external_revenue_30d_micro,
            html: (r) => usdc(r.external_revenue_30d_micro),
          },
        ]
      : []),
    { label: 'Payments', term: 'payments', num: true, key: (r) => r.payments_30d, html: (r) => count(r.payments_30d) },
    { label: 'Payers', term: 'payers', num: true, key: (r) => r.payers_30d, html: (r) => count(r.payers_30d) },
  ];
}

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
    ...figureColumns(v3),
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
    { label: 'Tier', term: 'tier', key: (m) => m.tier, html: (m) => valueTerm('tier', m.tier) },
    {
      label: 'Evidence',
      term: 'evidence_state',
      key: (m) => m.evidence_state,
      html: (m) => valueTerm('evidence_state', m.evidence_state),
    },
    ...figureColumns(v3),
  ];
  main.append(sortableTable('Members', columns, g.members, 'members'));
}
