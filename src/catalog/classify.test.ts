import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../lib/paths.ts';
import { CATEGORIES } from '../method/constants.ts';
import { CLASSIFIER_RULES, classify, sellerAssertedCategory } from './classify.ts';

describe('classify', () => {
  it('default: one keyword per category lands in that category', () => {
    expect(classify(null, 'Scrape any web page', 'https://x.example/a')).toBe('scraping-extraction');
    expect(classify(null, 'Text to video with Veo', 'https://x.example/a')).toBe('media-generation');
    expect(classify(null, 'Send an SMS', 'https://x.example/a')).toBe('communications');
    expect(classify(null, 'KYC for wallets', 'https://x.example/a')).toBe('verification-conformance');
    expect(classify(null, 'Semantic search over docs', 'https://x.example/a')).toBe('search-retrieval');
    expect(classify(null, 'Upload to IPFS', 'https://x.example/a')).toBe('storage-state');
    expect(classify(null, 'Create an invoice', 'https://x.example/a')).toBe('payments-infrastructure');
    expect(classify(null, null, 'https://dex.example/api/swap')).toBe('trading-execution');
    expect(classify(null, 'Weather for a city', 'https://x.example/a')).toBe('data-access');
    expect(classify('GPT wrapper', null, 'https://x.example/a')).toBe('inference');
    expect(classify(null, 'Access to protected content', 'https://x.example/a')).toBe('other');
  });

  it('behavior: the first category in the published order wins', () => {
    // "image" (media-generation) comes before "ai" (inference) and "price" (data-access).
    expect(classify(null, 'AI image of the BTC price', 'https://x.example/a')).toBe('media-generation');
  });

  it('behavior: whole-word keywords need a boundary, prefix keywords (*) do not', () => {
    expect(classify(null, 'buyer guide', 'https://x.example/a')).toBe('other');
    expect(classify(null, 'buy now', 'https://x.example/a')).toBe('trading-execution');
    expect(classify(null, 'aiape', 'https://x.example/a')).toBe('other');
    expect(classify(null, 'AI-powered', 'https://x.example/a')).toBe('inference');
    expect(classify(null, 'the scraper', 'https://x.example/a')).toBe('scraping-extraction');
  });

  it('behavior: the rules cover the ten categories other than `other`, once each', () => {
    const covered = CLASSIFIER_RULES.map((r) => r.category);
    expect(new Set(covered).size).toBe(covered.length);
    expect([...covered].sort()).toEqual(CATEGORIES.filter((c) => c !== 'other').sort());
  });
});

describe('docs/METHOD.md', () => {
  it('behavior: the published classifier table is the one the code runs', () => {
    const doc = readFileSync(path.join(projectRoot, 'docs/METHOD.md'), 'utf8');
    const section = doc.slice(doc.indexOf('<!-- catalog:begin'), doc.indexOf('<!-- catalog:end -->'));
    const rows = [...section.matchAll(/^\| (\d+) \| `([a-z-]+)` \| (.+) \|$/gm)].map((m) => ({
      category: m[2],
      keywords: [...m[3]!.matchAll(/`([^`]+)`/g)].map((k) => k[1]),
    }));
    expect(rows).toEqual(CLASSIFIER_RULES.map((r) => ({ category: r.category, keywords: [...r.keywords] })));
  });
});

describe('sellerAssertedCategory', () => {
  it('default: the first candidate naming one of the 11, trimmed and lowercased', () => {
    expect(sellerAssertedCategory([null, 'qr-code', ' Inference ', 'data-access'])).toBe('inference');
  });
  it('args: nothing that names a category gives null', () => {
    expect(sellerAssertedCategory([undefined, 'data-processing', 'api'])).toBeNull();
  });
});
