"""Labels the search queries of queries.txt over the listings of the real crawl (see README.md).

A procedure of its own, written apart from the search code: Python regular expressions over the
listing texts and a table of English plural forms. Reads the listings exported by
export-listings.ts (one JSON object a line) and writes ../search-labels.json.

    out=$(mktemp -d)
    npx tsx test/api/search-labels/export-listings.ts > "$out/listings.ndjson"
    python3 test/api/search-labels/label.py "$out/listings.ndjson"
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEX = re.compile(r'^(0x)?[0-9a-f]{6,40}$')
# -s words that are not the plural of their stem (README.md, "Relevance rule").
NOT_PLURAL = {'news', 'series', 'species', 'gas', 'bus', 'plus', 'status', 'analysis', 'basis', 'always', 'this', 'has', 'was', 'is', 'its', 'us', 'yes', 'less', 'across'}


def words(text):
    """Lowercased words of a text: runs of letters and digits."""
    return {w for w in re.split(r'[\W_]+', (text or '').lower()) if w}


def plurals(w):
    """The English plural forms of w, by the usual spelling rules."""
    forms = {w + 's'}
    if re.search(r'(s|x|z|ch|sh|o)$', w):
        forms.add(w + 'es')
    if re.search(r'[^aeiou]y$', w):
        forms.add(w[:-1] + 'ies')
    return forms


def same_word(v, w):
    """v is w, or its plural, or its singular (a listed non-plural is nobody's plural)."""
    if v == w:
        return True
    if v in plurals(w) and v not in NOT_PLURAL:
        return True
    return w in plurals(v) and w not in NOT_PLURAL


def main(path):
    listings = [json.loads(line) for line in open(path, encoding='utf-8')]
    texts = {l['listing_id']: words(l['title']) | words(l['description']) | words(l['resource_url']) for l in listings}
    vocabulary = set().union(*texts.values())
    queries = [q.rstrip('\n') for q in open(os.path.join(HERE, 'queries.txt'), encoding='utf-8') if q.strip() and not q.startswith('#')]
    out = []
    for q in queries:
        key = q.strip().lower()
        relevant = None
        if HEX.match(key):
            prefix = '0x' + key.removeprefix('0x')
            found = [l['listing_id'] for l in listings if (l['seller_address'] or '').lower().startswith(prefix)]
            if found or re.search(r'\d|^0x', key):
                relevant = found
        if relevant is None:
            qwords = words(q)
            # a word being typed: 3 letters or more, not itself a word of the catalog
            typed = {w for w in qwords if len(w) >= 3 and not any(same_word(v, w) for v in vocabulary)}

            def holds(ws, w):
                return any(same_word(v, w) or (w in typed and v.startswith(w)) for v in ws)

            relevant = [i for i, ws in texts.items() if all(holds(ws, w) for w in qwords)]
        out.append({'q': q, 'relevant': sorted(relevant)})
        print(f'{q!r}: {len(relevant)} relevant', file=sys.stderr)
    with open(os.path.join(HERE, '..', 'search-labels.json'), 'w', encoding='utf-8') as f:
        json.dump({'listings': len(listings), 'queries': out}, f, indent=1)
        f.write('\n')


main(sys.argv[1])
