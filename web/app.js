// The web page of x402-tally: reads only the public API of this origin (/api/v1/...), renders
// rankings, the market, and seller pages. Plain ES module, no build step. Charts: uPlot, served
// by this server from its npm package.
import uPlot from '/vendor/uplot.esm.js';

const params = new URLSearchParams(location.search);
const pinned = params.get('generation');
const main = document.getElementById('main');

/** A link to this page with the given parameters, keeping a pinned generation. */
function link(p) {
  const q = new URLSearchParams(p);
  if (pinned) q.set('generation', pinned);
  const text = q.toString();
  return text ? `/?${text}` : '/';
}

/**
 * Does this browser's JSON.parse give a reviver the source text of each value (its third argument,
 * `context.source`, the "JSON.parse source text access" proposal, in Chromium since 114)? Browsers
 * without it take the fallback, quoteBigIntegers. Asked once, at load.
 */
const sourceAccess = (() => {
  let source;
  JSON.parse('7', (_key, value, context) => ((source = context?.source), value));
  return source === '7';
})();

/** A JSON integer token (no fraction, no exponent). */
const INTEGER = /^-?\d+$/;

/**
 * A JSON string token or a number token, in the order they occur. A string is matched whole, so
 * the digits inside catalog text (a title like `Oracle ,12345678901234567890, feed`) are never
 * taken for a number; the string alternative is unrolled (`[^"\\]*(?:\\.[^"\\]*)*`) to match long
 * strings without backtracking.
 */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * The fallback for browsers without source access: the JSON text with every integer token beyond
 * Number.MAX_SAFE_INTEGER put in quotes, so JSON.parse reads it as its exact digits. Only tokens
 * outside strings are touched. Exported for the tests.
 */
export function quoteBigIntegers(text) {
  return text.replace(TOKENS, (token) =>
    INTEGER.test(token) && !Number.isSafeInteger(Number(token)) ? `"${token}"` : token,
  );
}

/**
 * JSON.parse that keeps integers beyond Number.MAX_SAFE_INTEGER (money above 2^53 - 1 micro-USDC)
 * as strings of their exact digits; every other value as JSON.parse reads it. The values of the
 * page are used accordingly: usdc() and compare() take an integer as a number or as digits.
 */
export function parseExact(text) {
  if (!sourceAccess) return JSON.parse(quoteBigIntegers(text));
  return JSON.parse(text, (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && INTEGER.test(context.source) ? context.source : value,
  );
}

/** GET an API path of the pinned (or latest) generation, integers exact (parseExact). */
async function api(path, extra = {}) {
  const q = new URLSearchParams(extra);
  if (pinned) q.set('generation', pinned);
  const url = `/api/v1${path}${q.toString() ? `?${q}` : ''}`;
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  const body = parseExact(await res.text());
  if (!res.ok) throw new Error(body?.error?.message ?? `${res.status} for ${url}`);
  return body;
}

/** Every row of a paged endpoint. */
async function all(path, key, extra = {}) {
  const rows = [];
  let cursor = null;
  do {
    const page = await api(path, { ...extra, ...(cursor ? { cursor } : {}) });
    rows.push(...page[key]);
    cursor = page.next_cursor;
  } while (cursor);
  return rows;
}

/** micro-USDC (an integer, as a string) as USDC, exactly: 1234567 -> "1.234567", 1500000 -> "1.50". */
export function usdc(micro) {
  if (micro === null || micro === undefined) return '–';
  const digits = String(micro).padStart(7, '0');
  const whole = digits.slice(0, -6).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const frac = digits.slice(-6).replace(/0+$/, '').padEnd(2, '0');
  return `${whole}.${frac}`;
}

const esc = (s) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
const count = (n) => Number(n).toLocaleString('en-US');
const short = (a) => `${a.slice(0, 8)}…${a.slice(-4)}`;

async function freshness() {
  const el = document.getElementById('freshness');
  const meta = await api('/meta');
  const when = meta.as_of.timestamp.replace('T', ' ').replace('.000Z', ' UTC');
  el.textContent =
    `Generation ${meta.generation}${pinned ? ' (pinned)' : ''} · method ${meta.method_version} · as of block ${meta.as_of.block_number} (${when}) · ` +
    (meta.freshness.stale ? 'STALE: the numbers are not current' : 'fresh');
  el.classList.toggle('stale', meta.freshness.stale);
  el.dataset.generation = String(meta.generation);
  return meta;
}

/** A table whose columns sort on click (and on Enter/Space: they are buttons). */
function sortableTable(caption, columns, rows, id) {
  const table = document.createElement('table');
  table.id = id;
  table.innerHTML = `<caption>${esc(caption)}</caption><thead><tr>${columns
    .map(
      (c, i) =>
        `<th scope="col"${c.num ? ' class="num"' : ''} aria-sort="none"><button type="button" data-col="${i}">${esc(c.label)}</button></th>`,
    )
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
  return table;
}

/** An integer as the page holds one: a number, or the exact digits of one beyond 2^53 - 1. */
const isInteger = (x) => Number.isInteger(x) || (typeof x === 'string' && INTEGER.test(x));

/** Compares integers (numbers or digit strings, exactly, as bigints), other numbers, and text. */
function compare(a, b) {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (isInteger(a) && isInteger(b)) {
    const d = BigInt(a) - BigInt(b);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  }
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b));
}

/**
 * Whether a generation has method 3.0.0's numbers (classes, external revenue): method 3.x. Older
 * generations serve those fields as null, and the page shows what it showed before.
 */
export function hasClasses(methodVersion) {
  return Number(/^(\d+)\./.exec(methodVersion)?.[1] ?? 0) >= 3;
}

/** The names of the evidence classes and internal reasons, as the page shows them. */
const CLASS_LABELS = {
  eip3009: 'EIP-3009',
  permit2_exact: 'Permit2 exact',
  permit2_upto: 'Permit2 upto',
  batch_settlement: 'Batch settlement (claims)',
};
const REASON_LABELS = { seller_funded: 'seller-funded', same_operator: 'same operator' };

async function categories() {
  const doc = await (await fetch('/api/v1/openapi.json')).json();
  return doc.components.schemas.Category.enum;
}

async function rankingsView(meta) {
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
    { label: 'Rank', num: true, key: (r) => r.rank, html: (r) => r.rank },
    {
      label: 'Seller',
      key: (r) => r.display_name ?? r.seller_address,
      html: (r) =>
        `<a href="${link({ seller: r.seller_address })}">${esc(r.display_name ?? short(r.seller_address))}</a> <span class="addr">${short(r.seller_address)}</span>`,
    },
    {
      label: 'Revenue (USDC)',
      num: true,
      key: (r) => r.verified_revenue_30d_micro,
      html: (r) => usdc(r.verified_revenue_30d_micro),
    },
    ...(v3
      ? [
          {
            label: 'External (USDC)',
            num: true,
            key: (r) => r.external_revenue_30d_micro,
            html: (r) => usdc(r.external_revenue_30d_micro),
          },
        ]
      : []),
    {
      label: 'Median (USDC)',
      num: true,
      key: (r) => r.median_payment_30d_micro,
      html: (r) => usdc(r.median_payment_30d_micro),
    },
    { label: 'Payments', num: true, key: (r) => r.payments_30d, html: (r) => count(r.payments_30d) },
    { label: 'Payers', num: true, key: (r) => r.payers_30d, html: (r) => count(r.payers_30d) },
    { label: 'Evidence', key: () => 'verified', html: () => 'verified' },
    {
      label: 'Farm flags',
      key: (r) => r.farm_flag,
      html: (r) =>
        r.farm_flag ? `<span class="flag">${esc(JSON.parse(r.farm_reasons ?? '[]').join(', '))}</span>` : '–',
    },
  ];
  main.append(sortableTable('Ranked sellers', columns, rows, 'rankings'));
}

/** A line chart of daily series: `series` = [{label, values, scale}]. */
function chart(el, title, days, series) {
  const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const colors = ['#0b57d0', '#b3261e', '#146c2e', '#7d5260', '#8a5a00'];
  const opts = {
    title,
    width: Math.min(1100, el.clientWidth || 1000),
    height: 280,
    scales: { x: { time: true } },
    axes: [{}, { scale: 'usdc', label: 'USDC' }, { scale: 'n', side: 1, label: 'count', grid: { show: false } }],
    series: [{}, ...series.map((s, i) => ({ label: s.label, scale: s.scale, stroke: colors[i], width: 2 }))],
  };
  new uPlot(opts, [xs, ...series.map((s) => s.values)], el);
}

async function marketView(meta) {
  const market = await api('/market/daily');
  const v3 = hasClasses(meta.method_version);
  const days = [...market.days].reverse(); // oldest first
  main.innerHTML = `<h2>The market, day by day</h2><div class="chart" id="market-chart" role="img" aria-label="Daily volume, payments, payers and sellers paid"></div>`;
  chart(
    main.querySelector('#market-chart'),
    'Verified x402 payments per UTC day',
    days.map((d) => d.day),
    [
      { label: 'volume (USDC)', scale: 'usdc', values: days.map((d) => Number(d.volume_micro) / 1e6) },
      ...(v3
        ? [
            {
              label: 'external volume (USDC)',
              scale: 'usdc',
              values: days.map((d) => Number(d.external_volume_micro) / 1e6),
            },
          ]
        : []),
      { label: 'payments', scale: 'n', values: days.map((d) => d.payments) },
      { label: 'payers', scale: 'n', values: days.map((d) => d.payers) },
      { label: 'sellers paid', scale: 'n', values: days.map((d) => d.sellers_paid) },
    ],
  );
  const totalMicro = market.days.reduce((sum, d) => sum + BigInt(d.volume_micro), 0n);
  const totalPayments = market.days.reduce((sum, d) => sum + d.payments, 0);
  const summary = document.createElement('p');
  summary.id = 'market-totals';
  summary.textContent = `${market.days.length} days: ${usdc(totalMicro.toString())} USDC in ${count(totalPayments)} payments.`;
  main.append(summary);
  const columns = [
    { label: 'Day', key: (d) => d.day, html: (d) => d.day },
    { label: 'Volume (USDC)', num: true, key: (d) => d.volume_micro, html: (d) => usdc(d.volume_micro) },
    ...(v3
      ? [
          {
            label: 'External (USDC)',
            num: true,
            key: (d) => d.external_volume_micro,
            html: (d) => usdc(d.external_volume_micro),
          },
        ]
      : []),
    { label: 'Payments', num: true, key: (d) => d.payments, html: (d) => count(d.payments) },
    { label: 'Payers', num: true, key: (d) => d.payers, html: (d) => count(d.payers) },
    { label: 'Sellers paid', num: true, key: (d) => d.sellers_paid, html: (d) => count(d.sellers_paid) },
    {
      label: 'Median (USDC)',
      num: true,
      key: (d) => d.median_payment_micro,
      html: (d) => usdc(d.median_payment_micro),
    },
  ];
  main.append(sortableTable('Market days, newest first', columns, market.days, 'market'));
}

async function sellerView(address) {
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
      <dt>Tier</dt><dd>${esc(p.tier)}${p.rank ? ` · rank ${p.rank}` : ''}</dd>
      <dt>Evidence</dt><dd>${esc(p.evidence_state)}</dd>
      <dt>Revenue, 30 days</dt><dd data-metric="revenue">${usdc(m.verified_revenue_30d_micro.value)} USDC</dd>
      <dt>Median payment</dt><dd data-metric="median">${usdc(m.median_payment_30d_micro.value)} USDC</dd>
      <dt>Payments</dt><dd data-metric="payments">${count(m.payments_30d.value)}</dd>
      <dt>Payers</dt><dd data-metric="payers">${count(m.payers_30d.value)}</dd>
      ${
        m.external_revenue_30d_micro
          ? `<dt>External revenue, 30 days</dt><dd data-metric="external-revenue">${usdc(m.external_revenue_30d_micro.value)} USDC</dd>
      <dt>External payments</dt><dd data-metric="external-payments">${count(m.external_payments_30d.value)}</dd>
      <dt>External payers</dt><dd data-metric="external-payers">${count(m.external_payers_30d.value)}</dd>`
          : ''
      }
      <dt>Farm flags</dt><dd>${p.farm_flag ? `<span class="flag">${esc(JSON.parse(p.farm_reasons ?? '[]').join(', '))}</span>` : 'none'}</dd>
      <dt>Provenance</dt><dd>rule <code>${esc(prov.rule)}</code>, method ${esc(prov.method_version)}, window ${esc(prov.window.start)} – ${esc(prov.window.end)}, as of block ${esc(prov.as_of_block)}, ${count(prov.inputs.payments)} payments from block ${esc(prov.inputs.first_block ?? '–')} to ${esc(prov.inputs.last_block ?? '–')}, evidence digest <code>${esc(prov.evidence_sha256)}</code></dd>
    </dl>
    <div class="chart" id="seller-chart" role="img" aria-label="The seller's daily revenue and payments"></div>`;
  if (daily.days.length > 0) {
    chart(
      main.querySelector('#seller-chart'),
      'Revenue and payments per UTC day',
      daily.days.map((d) => d.day),
      [
        { label: 'revenue (USDC)', scale: 'usdc', values: daily.days.map((d) => Number(d.revenue_micro) / 1e6) },
        { label: 'payments', scale: 'n', values: daily.days.map((d) => d.payments) },
        { label: 'payers', scale: 'n', values: daily.days.map((d) => d.payers) },
      ],
    );
  }
  const listingColumns = [
    { label: 'Title', key: (l) => l.title, html: (l) => esc(l.title ?? '–') },
    { label: 'Resource', key: (l) => l.resource_url, html: (l) => esc(l.resource_url) },
    { label: 'Category', key: (l) => l.category, html: (l) => `${esc(l.category)} (${esc(l.category_source)})` },
    { label: 'Network', key: (l) => l.network, html: (l) => esc(l.network) },
  ];
  if (p.by_class) {
    const classRows = Object.entries(p.by_class).map(([c, f]) => ({ class: c, ...f }));
    const classColumns = [
      { label: 'Class', key: (r) => r.class, html: (r) => esc(CLASS_LABELS[r.class] ?? r.class) },
      { label: 'Payments', num: true, key: (r) => r.payments, html: (r) => count(r.payments) },
      { label: 'Revenue (USDC)', num: true, key: (r) => r.revenue_micro, html: (r) => usdc(r.revenue_micro) },
    ];
    main.append(sortableTable('Payments by evidence class (30 days)', classColumns, classRows, 'by-class'));
  }
  if (p.internal) {
    const internalRows = Object.entries(p.internal).map(([reason, f]) => ({ reason, ...f }));
    const internalColumns = [
      { label: 'Reason', key: (r) => r.reason, html: (r) => esc(REASON_LABELS[r.reason] ?? r.reason) },
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
  main.append(sortableTable('Listings (catalog claims)', listingColumns, p.listings, 'listings'));
  const paymentColumns = [
    { label: 'Time', key: (x) => x.block_timestamp, html: (x) => esc(x.block_timestamp) },
    { label: 'Amount (USDC)', num: true, key: (x) => x.value_micro, html: (x) => usdc(x.value_micro) },
    { label: 'Payer', key: (x) => x.payer, html: (x) => `<span class="addr">${esc(x.payer)}</span>` },
    ...(p.by_class
      ? [
          { label: 'Class', key: (x) => x.class, html: (x) => esc(CLASS_LABELS[x.class] ?? x.class ?? '–') },
          {
            label: 'Internal',
            key: (x) => x.internal_reason,
            html: (x) => esc(x.internal_reason ? REASON_LABELS[x.internal_reason] : '–'),
          },
        ]
      : []),
    {
      label: 'Transaction',
      key: (x) => x.tx_hash,
      html: (x) => `<a href="https://basescan.org/tx/${esc(x.tx_hash)}" rel="noopener">${short(x.tx_hash)}</a>`,
    },
  ];
  main.append(sortableTable('Latest verified payments', paymentColumns, payments.payments, 'payments'));
  const audit = document.createElement('section');
  audit.innerHTML = `<h3>How to audit this seller</h3>
    <p>Recompute this seller's numbers and digests from the chain, reading only its logs:</p>
    <pre>npx x402-tally audit --generation ${esc(p.generation)} --seller ${esc(p.seller_address)}</pre>
    <p>Or the whole generation, from its bundle: <a href="/api/v1/generations/${esc(p.generation)}/bundle/manifest.json">manifest.json</a> and the files it lists, then <code>npx x402-tally audit --bundle DIR</code>.</p>`;
  main.append(audit);
}

async function start() {
  try {
    const meta = await freshness();
    const seller = params.get('seller');
    if (seller) await sellerView(seller.toLowerCase());
    else if (params.get('view') === 'market') await marketView(meta);
    else await rankingsView(meta);
    document.body.dataset.ready = 'true';
  } catch (error) {
    main.innerHTML = `<p role="alert">Could not load: ${esc(error.message)}</p>`;
    document.body.dataset.ready = 'error';
  }
}

document.getElementById('home').href = link({});
document.getElementById('nav-rankings').href = link({});
document.getElementById('nav-market').href = link({ view: 'market' });
start();
