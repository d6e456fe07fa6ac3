import { escapeControl } from './terminal.ts';

/**
 * An RPC, catalog or database URL reduced to its scheme and host: providers put API keys in the path, the
 * query and the user info, so none of those is ever shown. Non-URLs (file names) pass unchanged.
 */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (!['http:', 'https:', 'ws:', 'wss:', 'postgres:', 'postgresql:'].includes(url.protocol)) return value;
    const hidden = url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '';
    return `${url.protocol}//${url.host}${hidden ? '/…' : ''}`;
  } catch {
    return value;
  }
}

/**
 * The parts of a URL that may hold a secret, longest first, as they can appear in a text: the
 * path with its query, the path, the query, each query value, each path segment, the user and
 * the password, raw and percent-decoded (of a database URL: the password only). A provider that
 * echoes the request ("invalid api key in /v2/KEY?apikey=KEY2") shows any of them. Short pieces (under 6 characters, such as `v2` or
 * `rpc`) are common words, not keys, and are left alone.
 */
export function secretParts(value: string): string[] {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return [];
  }
  const parts = new Set<string>();
  const add = (piece: string) => {
    for (const p of [piece, safeDecode(piece)]) if (p.length >= 6) parts.add(p);
  };
  // A database URL's secret is its password; its user and database names are not keys.
  if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') {
    add(url.password);
    return [...parts];
  }
  if (url.pathname !== '/' || url.search) add(url.pathname + url.search);
  if (url.pathname !== '/') add(url.pathname);
  if (url.search) add(url.search.slice(1));
  for (const piece of url.search.slice(1).split('&')) {
    const eq = piece.indexOf('=');
    if (eq >= 0) add(piece.slice(eq + 1));
  }
  for (const segment of url.pathname.split('/')) add(segment);
  add(url.username);
  add(url.password);
  return [...parts].sort((a, b) => b.length - a.length);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Redacts each secret URL in a text (error messages from libraries, provider answers): the whole
 * URL becomes its origin (redactUrl), and any secret part of it (secretParts) that appears on its
 * own becomes `…`.
 */
export function redactText(text: string, urls: readonly string[]): string {
  let out = text;
  for (const url of urls) if (url) out = out.split(url).join(redactUrl(url));
  for (const url of urls) for (const part of secretParts(url)) out = out.split(part).join('…');
  return out;
}

/**
 * Text from outside (a provider's error body or message) for a log line or a message: one line
 * (every run of whitespace, tab and newline included, becomes one space), cut to `max`
 * characters so a hostile or broken provider cannot flood the logs, then with its control
 * characters escaped (escapeControl: ESC becomes `\x1b`, so the result is at most 4 * `max` + 1
 * characters).
 */
export function untrustedText(text: string, max = 200): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return escapeControl(oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine);
}
