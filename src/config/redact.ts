/**
 * An RPC or catalog URL reduced to its scheme and host: providers put API keys in the path, the
 * query and the user info, so none of those is ever shown. Non-URLs (file names) pass unchanged.
 */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ws:' && url.protocol !== 'wss:') {
      return value;
    }
    const hidden = url.pathname !== '/' || url.search !== '' || url.username !== '' || url.password !== '';
    return `${url.protocol}//${url.host}${hidden ? '/…' : ''}`;
  } catch {
    return value;
  }
}

/** Replaces every occurrence of each secret URL in a text (error messages from libraries). */
export function redactText(text: string, urls: readonly string[]): string {
  let out = text;
  for (const url of urls) if (url) out = out.split(url).join(redactUrl(url));
  return out;
}
