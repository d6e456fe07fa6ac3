// The web page of x402-tally: reads only the public API of this origin (/api/v1/...) and renders
// the rankings, the directory, operator groups, the market and seller pages. Plain ES modules, no
// build step. Charts: uPlot, served by this server from its npm package.
import { api, esc, link, params, pinned } from './lib.js';
import { loadGlossary } from './terms.js';
import { directoryView } from './directory.js';
import { operatorsView } from './operators.js';
import { marketView, rankingsView, sellerView } from './views.js';

export { parseExact, quoteBigIntegers, usdc, hasClasses } from './lib.js';

const main = document.getElementById('main');

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

async function start() {
  try {
    const [meta] = await Promise.all([freshness(), loadGlossary()]);
    const seller = params.get('seller');
    if (seller) await sellerView(meta, seller.toLowerCase());
    else if (params.get('view') === 'market') await marketView(meta);
    else if (params.get('view') === 'directory') await directoryView(meta);
    else if (params.get('view') === 'operators') await operatorsView(meta, params.get('operator'));
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
document.getElementById('nav-directory').href = link({ view: 'directory' });
document.getElementById('nav-operators').href = link({ view: 'operators' });
start();
