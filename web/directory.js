// The directory: every seller of the generation (not only verified ones), from
// /api/v1/directory, with a search box, filters and sorting. All its state lives in the URL
// (?view=directory&q=…&sort=…&category=…&evidence_state=…&farm_flag=…&class=…&cursor=…): a reload
// or back/forward shows the same view; the CSV link downloads the current view.
import { api, apiUrl, count, esc, hasClasses, link, reasonsOf } from './lib.js';
import { metricColumns, sellerColumn, sortableTable, stateColumns } from './table.js';
import { reasonsHtml, term, valueTerm } from './terms.js';

const main = document.getElementById('main');

/** The query parameters of the directory this page keeps in its URL, in this order. */
export const DIRECTORY_STATE = ['q', 'sort', 'category', 'evidence_state', 'farm_flag', 'class', 'cursor'];

/** The directory's state in the current URL: {q, sort, …}, only those set. */
function stateOf(search) {
  const p = new URLSearchParams(search);
  return Object.fromEntries(DIRECTORY_STATE.filter((k) => p.get(k)).map((k) => [k, p.get(k)]));
}

/**
 * The values the API accepts for each filter of /api/v1/directory, from its OpenAPI document;
 * on a generation before method 3.0.0, without the external order and the class filter (the API
 * answers them with a 400 there: such a generation has no classes).
 */
async function choices(v3) {
  const doc = await (await fetch('/api/v1/openapi.json')).json();
  const parameters = doc.paths['/api/v1/directory'].get.parameters;
  const values = (name) => parameters.find((p) => p.name === name)?.schema?.enum ?? [];
  return {
    sort: values('sort').filter((v) => v3 || v !== 'external_revenue'),
    category: values('category'),
    evidence_state: values('evidence_state'),
    farm_flag: ['1', '0'],
    class: v3 ? values('class') : [],
  };
}

/** How a value of a filter reads in its list. */
const VALUE_LABELS = { farm_flag: { 1: 'flagged', 0: 'not flagged' } };

const LABELS = {
  sort: 'Sort by',
  category: 'Category',
  evidence_state: 'Evidence',
  farm_flag: 'Farm flag',
  class: 'Class',
};
const TERMS = { evidence_state: 'evidence_state', farm_flag: 'farm_flag', class: 'class', category: 'categories' };

/** A <select> of one filter: "any" (or the API's default order for sort) and its values. */
function select(name, values, current) {
  if (values.length === 0) return '';
  const first = name === 'sort' ? '' : '<option value="">any</option>';
  const label = TERMS[name] ? term(TERMS[name], LABELS[name]) : esc(LABELS[name]);
  return `<span class="field"><label for="d-${name}">${label}</label><select id="d-${name}" name="${name}">${first}${values
    .map(
      (v) =>
        `<option value="${esc(v)}"${String(v) === current ? ' selected' : ''}>${esc(VALUE_LABELS[name]?.[v] ?? String(v).replaceAll('_', ' '))}</option>`,
    )
    .join('')}</select></span>`;
}

/** Goes to the directory with `state` (a new history entry), then draws it. */
function go(meta, state) {
  history.pushState(null, '', link({ view: 'directory', ...state }));
  void directoryView(meta);
}

let listening = false;

export async function directoryView(meta) {
  if (!listening) {
    // Back and forward: the URL holds the whole state; draw it again.
    window.addEventListener('popstate', () => {
      if (new URLSearchParams(location.search).get('view') === 'directory') void directoryView(meta);
    });
    listening = true;
  }
  const state = stateOf(location.search);
  const v3 = hasClasses(meta.method_version);
  const [page, options] = await Promise.all([api('/directory', { ...state, limit: '50' }), choices(v3)]);
  const { cursor: _cursor, ...filters } = state;
  const csv = apiUrl('/directory', { ...filters, format: 'csv' });
  main.innerHTML = `<h2>Directory: every seller of generation ${esc(page.generation)}</h2>
    <form id="directory-form" class="controls" role="search">
      <span class="field"><label for="d-q">Search</label><input type="search" id="d-q" name="q" value="${esc(state.q ?? '')}" placeholder="words, a prefix, an address"></span>
      ${['sort', 'category', 'evidence_state', 'farm_flag', 'class'].map((n) => select(n, options[n], state[n] ?? '')).join('')}
      <button type="submit">Search</button>
    </form>
    <p class="controls"><span id="directory-count">${count(page.total)} sellers</span> · <a id="directory-csv" href="${esc(csv)}">CSV of this view</a></p>`;
  const form = main.querySelector('#directory-form');
  const read = () => {
    const data = new FormData(form);
    // The API's default order is left out of the URL: /?view=directory and the same view chosen are one URL.
    return Object.fromEntries(
      [...data.entries()]
        .filter(([k, v]) => v !== '' && !(k === 'sort' && v === 'verified_revenue'))
        .map(([k, v]) => [k, String(v).trim()]),
    );
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go(meta, read());
  });
  // A filter applies as soon as it is chosen (the search text waits for Enter or the button).
  form.querySelectorAll('select').forEach((s) => s.addEventListener('change', () => go(meta, read())));
  const columns = [
    sellerColumn(),
    ...stateColumns(),
    ...metricColumns(v3, { median: true }),
    {
      label: 'Categories',
      term: 'categories',
      key: (r) => (r.categories ?? []).join(', '),
      html: (r) => esc((r.categories ?? []).join(', ')),
    },
    {
      label: 'Classes',
      term: 'class',
      key: (r) => (r.classes ?? []).join(', '),
      html: (r) => (r.classes ?? []).map((c) => valueTerm('class', c)).join(', ') || '–',
    },
    {
      label: 'Farm flags',
      term: 'farm_flag',
      key: (r) => r.farm_flag,
      html: (r) => (r.farm_flag ? reasonsHtml(reasonsOf(r)) : '–'),
    },
    {
      label: 'Operator group',
      term: 'operator_group',
      key: (r) => r.operator_group,
      html: (r) =>
        r.operator_group
          ? `<a href="${link({ view: 'operators', operator: r.operator_group })}">${esc(r.operator_group)}</a>`
          : '–',
    },
  ];
  main.append(sortableTable('Sellers (this page; the order is the API’s)', columns, page.sellers, 'directory'));
  const pager = document.createElement('p');
  pager.className = 'pager';
  const first = link({ view: 'directory', ...filters });
  const next = page.next_cursor ? link({ view: 'directory', ...filters, cursor: page.next_cursor }) : null;
  pager.innerHTML = `${state.cursor ? `<a id="directory-first" href="${esc(first)}">First page</a>` : ''}${
    next ? `<a id="directory-next" href="${esc(next)}">Next page</a>` : ''
  }`;
  pager.querySelector('#directory-first')?.addEventListener('click', (e) => {
    e.preventDefault();
    go(meta, filters);
  });
  pager.querySelector('#directory-next')?.addEventListener('click', (e) => {
    e.preventDefault();
    go(meta, { ...filters, cursor: page.next_cursor });
  });
  main.append(pager);
  document.body.dataset.ready = 'true';
}
