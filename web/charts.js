// Charts of daily series: every UTC day of the window is drawn, a day without payments at 0 (the
// API serves only days with payments), value axes start at 0 and say their unit. uPlot for the
// charts; sparklines are a few lines of inline SVG.
import uPlot from '/vendor/uplot.esm.js';
import { esc } from './lib.js';

const DAY_MS = 86_400_000;

/**
 * Every UTC day (YYYY-MM-DD) from the day of `start` to the day of `end` (ISO times: the window
 * of /meta), oldest first. The window is (start, end]: its first day holds payments after start.
 */
export function windowDays(start, end) {
  const days = [];
  const last = Date.parse(`${end.slice(0, 10)}T00:00:00Z`);
  for (let t = Date.parse(`${start.slice(0, 10)}T00:00:00Z`); t <= last; t += DAY_MS)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/**
 * The rows of a daily endpoint spread over `days`: for each day the row served for it, or null
 * (no payment that day). `pick(row)` then reads a value; `zero` stands for a day without a row.
 */
export function byDay(days, rows) {
  const served = new Map(rows.map((r) => [r.day, r]));
  return days.map((d) => served.get(d) ?? null);
}

/** A value of a row of byDay, 0 for a day without payments. */
export const valueOr0 = (row, read) => (row === null ? 0 : read(row));

/** A scale from 0 to a little above the largest value (1 when every value is 0). */
const fromZero = (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1];

/**
 * A line chart of daily series, one point per day of `days` (zeros included): `series` =
 * [{label, values, scale: 'usdc'|'n'}]. The USDC axis is on the left, the count axis on the right.
 */
export function chart(el, title, days, series) {
  const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const colors = ['#0b57d0', '#b3261e', '#146c2e', '#7d5260', '#8a5a00'];
  const hasCounts = series.some((s) => s.scale === 'n');
  const opts = {
    title,
    width: Math.max(280, Math.min(1100, el.clientWidth || 1000)),
    height: el.clientWidth && el.clientWidth < 500 ? 220 : 280,
    scales: { x: { time: true }, usdc: { range: fromZero }, n: { range: fromZero } },
    axes: [
      { label: 'UTC day' },
      { scale: 'usdc', label: 'USDC' },
      ...(hasCounts ? [{ scale: 'n', side: 1, label: 'count', grid: { show: false } }] : []),
    ],
    series: [
      { label: 'day', value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toISOString().slice(0, 10)) },
      ...series.map((s, i) => ({
        label: s.label,
        scale: s.scale,
        stroke: colors[i],
        width: 2,
        points: { show: true },
      })),
    ],
  };
  el.dataset.points = String(days.length);
  el.dataset.firstDay = days[0] ?? '';
  el.dataset.lastDay = days.at(-1) ?? '';
  // The tests read the drawn data and scales from the element.
  el.uplot = new uPlot(opts, [xs, ...series.map((s) => s.values)], el);
  return el.uplot;
}

/**
 * A sparkline of `values` (numbers, oldest first) as an inline SVG, its baseline at 0: the last
 * value is marked. `label` is read out (role img).
 */
export function sparkline(values, label, width = 120, height = 28) {
  const max = Math.max(0, ...values);
  const x = (i) => (values.length > 1 ? (i / (values.length - 1)) * (width - 4) + 2 : width / 2);
  const y = (v) => height - 2 - (max > 0 ? (v / max) * (height - 4) : 0);
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const last = values.length
    ? `<circle cx="${x(values.length - 1).toFixed(1)}" cy="${y(values.at(-1)).toFixed(1)}" r="2"/>`
    : '';
  return `<svg class="spark" role="img" aria-label="${esc(label)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" data-points="${values.length}"><line x1="0" y1="${height - 2}" x2="${width}" y2="${height - 2}" class="base"/><polyline points="${points}"/>${last}</svg>`;
}
