// Labels explained where they appear, on hover and on keyboard focus, from the one glossary of
// the project (src/api/glossary.ts, served as /web/glossary.json; MCP's tool descriptions use the
// same texts). Each text is written once into a hidden list (#glossary-texts), which a term's
// aria-describedby names, so a screen reader reads it; one floating tooltip (#tooltip) shows the
// text of the term hovered or focused, and Escape hides it (WCAG 1.4.13). A term adds nothing to
// the text of its cell.
import { esc } from './lib.js';

let glossary = {};
const idOf = (key) => `g-${key.replace(/[^a-z0-9_-]/gi, '-')}`;

/** Loads the glossary once, before the first view draws, and writes its texts into the page. */
export async function loadGlossary() {
  const res = await fetch('/web/glossary.json');
  if (!res.ok) throw new Error(`${res.status} for /web/glossary.json`);
  glossary = await res.json();
  const list = document.createElement('div');
  list.id = 'glossary-texts';
  list.hidden = true;
  list.innerHTML = Object.entries(glossary)
    .map(([key, e]) => `<span id="${idOf(key)}">${esc(e.text)}</span>`)
    .join('');
  document.body.append(list);
  const tooltip = document.createElement('div');
  tooltip.id = 'tooltip';
  tooltip.setAttribute('role', 'tooltip');
  tooltip.hidden = true;
  document.body.append(tooltip);
}

/** The glossary entry of a key: {label, text}; a missing key is a mistake of the page. */
export function entry(key) {
  const e = glossary[key];
  if (!e) throw new Error(`no glossary entry ${key}`);
  return e;
}

/** The attributes that make an element explain `key`. */
const describe = (key) => `data-term="${esc(key)}" aria-describedby="${idOf(key)}"`;

/** A label explained: its text (default: the glossary's label), focusable, the glossary text as its description. */
export function term(key, label = entry(key).label) {
  entry(key);
  return `<span class="term" tabindex="0" ${describe(key)}>${esc(label)}</span>`;
}

/** A column header's sort button, explained by `key`. */
export function headerTerm(key, buttonHtml) {
  entry(key);
  return buttonHtml.replace('<button ', `<button ${describe(key)} `);
}

/** A value explained by the glossary entry `group.value` when there is one (evidence states, tiers, classes…). */
export function valueTerm(group, value, label) {
  const key = `${group}.${value}`;
  return glossary[key] ? term(key, label ?? glossary[key].label) : esc(label ?? value ?? '–');
}

/** The farm reasons of a seller, each explained (`listing_count>50` by the listing_count entry). */
export function reasonsHtml(reasons) {
  if (!reasons.length) return '–';
  const items = reasons.map((r) => {
    const key = `farm_reason.${/^([a-z_]+)/.exec(r)?.[1]}`;
    return glossary[key] ? term(key, r) : esc(r);
  });
  return `<span class="flag">${items.join(', ')}</span>`;
}

/** Shows the tooltip of a term element next to it, inside the viewport. */
function show(el) {
  const tooltip = document.getElementById('tooltip');
  if (!tooltip) return;
  tooltip.textContent = entry(el.dataset.term).text;
  tooltip.hidden = false;
  const r = el.getBoundingClientRect();
  const width = Math.min(320, document.documentElement.clientWidth - 16);
  tooltip.style.maxWidth = `${width}px`;
  const left = Math.max(
    8,
    Math.min(r.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8),
  );
  tooltip.style.left = `${left}px`;
  tooltip.style.top = `${r.bottom + window.scrollY + 6}px`;
  tooltip.dataset.for = el.dataset.term;
}
function hide() {
  const tooltip = document.getElementById('tooltip');
  if (tooltip) tooltip.hidden = true;
}

const termOf = (target) => (target instanceof Element ? target.closest('[data-term]') : null);
document.addEventListener('mouseover', (e) => {
  const el = termOf(e.target);
  if (el) show(el);
});
document.addEventListener('mouseout', (e) => {
  if (termOf(e.target) && !termOf(e.relatedTarget)) hide();
});
document.addEventListener('focusin', (e) => {
  const el = termOf(e.target);
  if (el) show(el);
  else hide();
});
document.addEventListener('focusout', hide);
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') hide();
});
