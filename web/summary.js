// The market summary: the totals of the last 7 days, the 7 before and the 30-day window as the
// API computes them (/api/v1/market/summary), each with a sparkline of its daily series over the
// window (days without payments at 0).
import { api, count, esc, hasClasses, usdc } from './lib.js';
import { sparkline } from './charts.js';
import { entry, term } from './terms.js';

/** The figures of the summary: glossary key, field of a period, key of `change`, how to show a total, the daily value. */
const FIGURES = [
  {
    key: 'volume',
    field: 'volume_micro',
    change: 'volume',
    show: (v) => `${usdc(v)} USDC`,
    daily: (d) => Number(d.volume_micro) / 1e6,
  },
  {
    key: 'external_volume',
    field: 'external_volume_micro',
    change: 'external_volume',
    show: (v) => `${usdc(v)} USDC`,
    daily: (d) => Number(d.external_volume_micro ?? 0) / 1e6,
  },
  { key: 'payments', field: 'payments', change: 'payments', show: count, daily: (d) => d.payments },
  { key: 'payers', field: 'payers', change: 'payers', show: count, daily: (d) => d.payers },
  { key: 'sellers_paid', field: 'sellers_paid', change: 'sellers_paid', show: count, daily: (d) => d.sellers_paid },
];

/** A change as the API serves it (a fraction, 0.25 = +25 %) as a percentage; – when null. */
export function percent(fraction) {
  if (fraction === null || fraction === undefined) return '–';
  const text = (Number(fraction) * 100).toLocaleString('en-US', { maximumFractionDigits: 1 });
  return `${Number(fraction) > 0 ? '+' : ''}${text} %`;
}

/** A total of a period: – when the period has no publishable day (null). */
const total = (period, f) => (period ? f.show(period[f.field]) : '–');

/**
 * Draws the summary into `el` from /api/v1/market/summary: `days` are the window's days, `served`
 * the daily rows by day (null: none), for the sparklines. The page adds nothing up itself.
 */
export async function marketSummary(el, meta, days, served) {
  const summary = await api('/market/summary');
  const v3 = hasClasses(meta.method_version);
  const { last_7d: last, prev_7d: prev, last_30d: month } = summary.periods;
  const done = summary.computed;
  const rows = FIGURES.filter((f) => v3 || f.key !== 'external_volume').map((f) => {
    const values = served.map((r) => (r === null ? 0 : f.daily(r)));
    const spark = sparkline(values, `${entry(f.key).label}, daily, ${days[0]} to ${days.at(-1)}`);
    const totals = done
      ? `<td class="num" data-period="last_7d">${total(last, f)}</td>
      <td class="num" data-period="prev_7d">${total(prev, f)}</td>
      <td class="num" data-period="change">${percent(summary.change[f.change])}</td>
      <td class="num" data-period="last_30d">${total(month, f)}</td>`
      : '';
    return `<tr data-figure="${esc(f.key)}"><th scope="row">${term(f.key)}</th>${totals}<td>${spark}</td></tr>`;
  });
  const span = (p) => (p ? `${p.first_day} – ${p.last_day}` : 'no days');
  const heads = done
    ? `<th scope="col" class="num">Last 7 days</th><th scope="col" class="num">7 days before</th><th scope="col" class="num">${term('change_7d')}</th><th scope="col" class="num">30 days</th>`
    : '';
  const caption = done
    ? `Market summary (last 7 days ${esc(span(last))}; 7 days before ${esc(span(prev))})`
    : 'Market, day by day (this generation was computed before the market summary existed: no totals)';
  el.innerHTML = `<div class="table-wrap"><table id="market-summary"><caption>${caption}</caption>
    <thead><tr><th scope="col">Figure</th>${heads}<th scope="col">Daily, the window</th></tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>`;
}
