// The rankings, the market and a seller's page. Every number is one the API served; the page
// formats it and never computes a metric.
import { all, api, count, esc, hasClasses, link, pinned, reasonsOf, short, usdc } from './lib.js';
import { byDay, chart, valueOr0, windowDays } from './charts.js';
import { metricColumns, sellerColumn, sortableTable } from './table.js';
import { reasonsHtml, term, valueTerm } from './terms.js';
import { marketSummary } from './summary.js';

const main = document.getElementById('main');

async function categories() {
  const doc = await (await fetch('/api/v1/openapi.json')).json();
  return doc.components.schemas.Category.enum;
}

export async function rankingsView(meta) {
  const params = new URLSearchParams(location.search);
  const category = params.get('category') ?? '';
  const v3 = hasClasses(meta.method_version);
  // sort=external_revenue (method 3.x): the API's order by external revenue, and its ranks.
  const sort = v3 && params.get('sort') === 'external_revenue' ? 'external_revenue' : '';
  const [rows, cats] = await Promise.all([
    all('/rankings', 'rankings', { limit: '500', ...(category ? { category } : {}), ...(sort ? { sort } : {}) }),
    categories(),
  ]);
  const csv = new URLSearchParams({ format: 'csv', ...(category ? { category } : {}), ...(sort ? { sort } : {}) });
  if (pinned) csv.set('generation', pinned);
  const order = v3
    ? `<label for="sort">Order</label><select id="sort"><option value="">verified revenue</option><option value="external_revenue"${sort ? ' selected' : ''}>external revenue</option></select>`
    : '';
  main.innerHTML = `<h2>Verified sellers by 30-day ${sort ? 'external ' : ''}revenue</h2>
    <div class="controls"><label for="category">Category</label>
    <select id="category"><option value="">all</option>${cats.map((c) => `<option${c === category ? ' selected' : ''}>${esc(c)}</option>`).join('')}</select>
    ${order}
    <span>${count(rows.length)} sellers</span> · <a id="rankings-csv" href="/api/v1/rankings?${esc(csv.toString())}">CSV</a></div>`;
  const go = (category, sort) => {
    location.href = link({ ...(category ? { category } : {}), ...(sort ? { sort } : {}) });
  };
  main.querySelector('#category').addEventListener('change', (e) => go(e.target.value, sort));
  main.querySelector('#sort')?.addEventListener('change', (e) => go(category, e.target.value));
  const columns = [
    { label: 'Rank', term: 'rank', num: true, key: (r) => r.rank, html: (r) => r.rank },
    sellerColumn(),
    ...metricColumns(v3, { median: true }),
    {
      label: 'Evidence',
      term: 'evidence_state',
      key: () => 'verified',
      html: () => valueTerm('evidence_state', 'verified'),
    },
    { label: 'Farm flags', term: 'farm_flag', key: (r) => r.farm_flag, html: (r) => reasonsHtml(reasonsOf(r)) },
  ];
  main.append(sortableTable('Ranked sellers', columns, rows, 'rankings'));
}

export async function marketView(meta) {
  const market = await api('/market/daily');
  const v3 = hasClasses(meta.method_version);
  const days = windowDays(meta.window.start, meta.window.end);
  const served = byDay(days, market.days);
  main.innerHTML = `<h2>The market</h2><section id="summary" aria-label="Market summary"></section>
    <div class="chart" id="market-chart" role="img" aria-label="Daily volume, payments, payers and sellers paid, every day of the window"></div>`;
  await marketSummary(main.querySelector('#summary'), meta, days, served);
  const money = (read) => served.map((r) => valueOr0(r, (x) => Number(read(x)) / 1e6));
  chart(main.querySelector('#market-chart'), 'Verified x402 payments per UTC day (days without payments at 0)', days, [
    { label: 'volume (USDC)', scale: 'usdc', values: money((d) => d.volume_micro) },
    ...(v3 ? [{ label: 'external volume (USDC)', scale: 'usdc', values: money((d) => d.external_volume_micro) }] : []),
    { label: 'payments (count)', scale: 'n', values: served.map((r) => valueOr0(r, (d) => d.payments)) },
    { label: 'payers (count)', scale: 'n', values: served.map((r) => valueOr0(r, (d) => d.payers)) },
    { label: 'sellers paid (count)', scale: 'n', values: served.map((r) => valueOr0(r, (d) => d.sellers_paid)) },
  ]);
  const columns = [
    { label: 'Day', key: (d) => d.day, html: (d) => d.day },
    {
      label: 'Volume (USDC)',
      term: 'volume',
      num: true,
      key: (d) => d.volume_micro,
      html: (d) => usdc(d.volume_micro),
    },
    ...(v3
      ? [
          {
            label: 'External (USDC)',
            term: 'external_volume',
            num: true,
            key: (d) => d.external_volume_micro,
            html: (d) => usdc(d.external_volume_micro),
          },
        ]
      : []),
    { label: 'Payments', term: 'payments', num: true, key: (d) => d.payments, html: (d) => count(d.payments) },
    { label: 'Payers', term: 'payers', num: true, key: (d) => d.payers, html: (d) => count(d.payers) },
    {
      label: 'Sellers paid',
      term: 'sellers_paid',
      num: true,
      key: (d) => d.sellers_paid,
      html: (d) => count(d.sellers_paid),
    },
    {
      label: 'Median (USDC)',
      term: 'median_payment',
      num: true,
      key: (d) => d.median_payment_micro,
      html: (d) => usdc(d.median_payment_micro),
    },
  ];
  main.append(sortableTable('Market days with payments, newest first', columns, market.days, 'market'));
}

/** A transaction: linked to the explorer when /meta says the chain is the public Base mainnet, else its hash as text. */
function txCell(meta, hash) {
  return meta.chain?.public && meta.chain.explorer_url
    ? `<a href="${esc(meta.chain.explorer_url)}/tx/${esc(hash)}" rel="noopener">${short(hash)}</a>`
    : `<code title="${esc(hash)}">${short(hash)}</code>`;
}

export async function sellerView(meta, address) {
  const [p, daily, payments] = await Promise.all([
    api(`/sellers/${address}`),
    api(`/sellers/${address}/daily`).catch(() => ({ days: [] })),
    api(`/sellers/${address}/payments`, { limit: '20' }),
  ]);
  const m = p.metrics;
  const prov = m.verified_revenue_30d_micro.provenance;
  main.innerHTML = `<h2>${esc(p.display_name ?? p.seller_address)}</h2>
    <p class="addr">${esc(p.seller_address)}</p>
    <dl id="seller-metrics">
      <dt>${term('tier')}</dt><dd>${valueTerm('tier', p.tier)}${p.rank ? ` · ${term('rank', 'rank')} ${p.rank}` : ''}</dd>
      <dt>${term('evidence_state')}</dt><dd>${valueTerm('evidence_state', p.evidence_state)}</dd>
      <dt>${term('verified_revenue', 'Revenue, 30 days')}</dt><dd data-metric="revenue">${usdc(m.verified_revenue_30d_micro.value)} USDC</dd>
      <dt>${term('median_payment')}</dt><dd data-metric="median">${usdc(m.median_payment_30d_micro.value)} USDC</dd>
      <dt>${term('payments')}</dt><dd data-metric="payments">${count(m.payments_30d.value)}</dd>
      <dt>${term('payers')}</dt><dd data-metric="payers">${count(m.payers_30d.value)}</dd>
      ${
        m.external_revenue_30d_micro
          ? `<dt>${term('external_revenue', 'External revenue, 30 days')}</dt><dd data-metric="external-revenue">${usdc(m.external_revenue_30d_micro.value)} USDC</dd>
      <dt>${term('payments', 'External payments')}</dt><dd data-metric="external-payments">${count(m.external_payments_30d.value)}</dd>
      <dt>${term('payers', 'External payers')}</dt><dd data-metric="external-payers">${count(m.external_payers_30d.value)}</dd>`
          : ''
      }
      ${p.operator_group ? `<dt>${term('operator_group')}</dt><dd data-metric="operator-group"><a href="${link({ view: 'operators', operator: p.operator_group })}">${esc(p.operator_group)}</a></dd>` : ''}
      <dt>${term('farm_flag')}</dt><dd>${p.farm_flag ? reasonsHtml(reasonsOf(p)) : 'none'}</dd>
      <dt>Provenance</dt><dd>rule <code>${esc(prov.rule)}</code>, method ${esc(prov.method_version)}, window ${esc(prov.window.start)} – ${esc(prov.window.end)}, as of block ${esc(prov.as_of_block)}, ${count(prov.inputs.payments)} payments from block ${esc(prov.inputs.first_block ?? '–')} to ${esc(prov.inputs.last_block ?? '–')}, evidence digest <code>${esc(prov.evidence_sha256)}</code></dd>
    </dl>
    <div class="chart" id="seller-chart" role="img" aria-label="The seller's daily revenue and payments, every day of the window"></div>`;
  const days = windowDays(meta.window.start, meta.window.end);
  const served = byDay(days, daily.days);
  chart(main.querySelector('#seller-chart'), 'Revenue and payments per UTC day (days without payments at 0)', days, [
    {
      label: 'revenue (USDC)',
      scale: 'usdc',
      values: served.map((r) => valueOr0(r, (d) => Number(d.revenue_micro) / 1e6)),
    },
    { label: 'payments (count)', scale: 'n', values: served.map((r) => valueOr0(r, (d) => d.payments)) },
    { label: 'payers (count)', scale: 'n', values: served.map((r) => valueOr0(r, (d) => d.payers)) },
  ]);
  if (p.by_class) {
    const classRows = Object.entries(p.by_class).map(([c, f]) => ({ class: c, ...f }));
    const classColumns = [
      { label: 'Class', term: 'class', key: (r) => r.class, html: (r) => valueTerm('class', r.class) },
      { label: 'Payments', term: 'payments', num: true, key: (r) => r.payments, html: (r) => count(r.payments) },
      { label: 'Revenue (USDC)', num: true, key: (r) => r.revenue_micro, html: (r) => usdc(r.revenue_micro) },
    ];
    main.append(sortableTable('Payments by evidence class (30 days)', classColumns, classRows, 'by-class'));
  }
  if (p.internal) {
    const internalRows = Object.entries(p.internal).map(([reason, f]) => ({ reason, ...f }));
    const internalColumns = [
      { label: 'Reason', key: (r) => r.reason, html: (r) => valueTerm('internal', r.reason) },
      { label: 'Payments', num: true, key: (r) => r.payments, html: (r) => count(r.payments) },
      { label: 'Revenue (USDC)', num: true, key: (r) => r.revenue_micro, html: (r) => usdc(r.revenue_micro) },
      { label: 'Payers', num: true, key: (r) => r.payers, html: (r) => count(r.payers) },
    ];
    main.append(
      sortableTable(
        "Internal payments: from the seller's own side (30 days)",
        internalColumns,
        internalRows,
        'internal',
      ),
    );
  }
  const listingColumns = [
    { label: 'Title', key: (l) => l.title, html: (l) => esc(l.title ?? '–') },
    { label: 'Resource', key: (l) => l.resource_url, html: (l) => esc(l.resource_url) },
    {
      label: 'Category',
      term: 'categories',
      key: (l) => l.category,
      html: (l) => `${esc(l.category)} (${esc(l.category_source)})`,
    },
    { label: 'Network', key: (l) => l.network, html: (l) => esc(l.network) },
  ];
  main.append(sortableTable('Listings (catalog claims)', listingColumns, p.listings, 'listings'));
  const paymentColumns = [
    { label: 'Time', key: (x) => x.block_timestamp, html: (x) => esc(x.block_timestamp) },
    { label: 'Amount (USDC)', num: true, key: (x) => x.value_micro, html: (x) => usdc(x.value_micro) },
    { label: 'Payer', key: (x) => x.payer, html: (x) => `<span class="addr">${esc(x.payer)}</span>` },
    ...(p.by_class
      ? [
          { label: 'Class', term: 'class', key: (x) => x.class, html: (x) => valueTerm('class', x.class) },
          {
            label: 'Internal',
            key: (x) => x.internal_reason,
            html: (x) => (x.internal_reason ? valueTerm('internal', x.internal_reason) : '–'),
          },
        ]
      : []),
    { label: 'Transaction', key: (x) => x.tx_hash, html: (x) => txCell(meta, x.tx_hash) },
  ];
  main.append(sortableTable('Latest verified payments', paymentColumns, payments.payments, 'payments'));
  const audit = document.createElement('section');
  audit.innerHTML = `<h3>How to audit this seller</h3>
    <p>Recompute this seller's numbers and digests from the chain, reading only its logs (in a checkout of x402-tally, with RPC_URL set to a Base node):</p>
    <pre>npx x402-tally audit --generation ${esc(p.generation)} --seller ${esc(p.seller_address)}</pre>
    <p>Or the whole generation, from its bundle: <a href="/api/v1/generations/${esc(p.generation)}/bundle/manifest.json">manifest.json</a> and the files it lists, then <code>npx x402-tally audit --bundle DIR</code>.</p>`;
  main.append(audit);
}
