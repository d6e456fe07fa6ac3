// The market summary: the totals of the last 7 days, the 7 before and the 30-day window as the
// API computes them (/api/v1/market/summary), each with a sparkline of its daily series over the
// window (days without payments at 0).
import { api, count, esc, usdc } from './lib.js';
import { sparkline } from './charts.js';
import { term } from './terms.js';

/** Whether /api/v1/market/summary is served (h-groups). */
const SUMMARY_READY = false;

/** The figures of the summary: label key, how to show a total, and the daily value behind the sparkline. */
const FIGURES = [
  { key: 'volume', field: 'volume_micro', show: (v) => `${usdc(v)} USDC`, daily: (d) => Number(d.volume_micro) / 1e6 },
  {
    key: 'external_volume',
    field: 'external_volume_micro',
    show: (v) => `${usdc(v)} USDC`,
    daily: (d) => Number(d.external_volume_micro ?? 0) / 1e6,
  },
  { key: 'payments', field: 'payments', show: count, daily: (d) => d.payments },
  { key: 'payers', field: 'payers', show: count, daily: (d) => d.payers },
  { key: 'sellers_paid', field: 'sellers_paid', show: count, daily: (d) => d.sellers_paid },
];

/** A change as the API serves it (a percentage, or null when the 7 days before had nothing). */
function change(value) {
  if (value === null || value === undefined) return '–';
  const n = Number(value);
  return `${n > 0 ? '+' : ''}${n.toLocaleString('en-US', { maximumFractionDigits: 1 })} %`;
}

/** Draws the summary into `el`: `days` are the window's days, `served` the daily rows by day (null: none). */
export async function marketSummary(el, meta, days, served) {
  const summary = SUMMARY_READY ? await api('/market/summary') : null;
  const rows = FIGURES.filter(
    (f) => f.key !== 'external_volume' || served.some((r) => r?.external_volume_micro != null),
  );
  const cells = rows.map((f) => {
    const values = served.map((r) => (r === null ? 0 : f.daily(r)));
    const spark = sparkline(values, `${f.key.replace('_', ' ')}, daily, ${days[0]} to ${days.at(-1)}`);
    const totals = summary
      ? `<td class="num" data-period="last_7d">${f.show(summary.last_7d?.[f.field])}</td>
         <td class="num" data-period="previous_7d">${f.show(summary.previous_7d?.[f.field])}</td>
         <td class="num" data-period="change">${change(summary.change_7d?.[f.field])}</td>
         <td class="num" data-period="last_30d">${f.show(summary.last_30d?.[f.field])}</td>`
      : '';
    return `<tr data-figure="${esc(f.key)}"><th scope="row">${term(f.key)}</th>${totals}<td>${spark}</td></tr>`;
  });
  el.innerHTML = `<div class="table-wrap"><table id="market-summary"><caption>Market summary, as of ${esc(meta.as_of.timestamp)}</caption>
    <thead><tr><th scope="col">Figure</th>${
      summary
        ? `<th scope="col" class="num">Last 7 days</th><th scope="col" class="num">7 days before</th><th scope="col" class="num">${term('change_7d')}</th><th scope="col" class="num">30 days</th>`
        : ''
    }<th scope="col">Daily, 30 days</th></tr></thead><tbody>${cells.join('')}</tbody></table></div>`;
}
