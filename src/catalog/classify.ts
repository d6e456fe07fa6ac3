import { CATEGORIES, type Category } from '../lib/categories.ts';

/**
 * The category classifier of method 1.0.0 (docs/METHOD.md section 1). Deterministic: the text is
 * the lowercase title, description and resource URL joined by "\n"; categories are tried in the
 * order of CLASSIFIER_RULES and the first one with a keyword hit wins; no hit gives `other`.
 *
 * A keyword hits where it occurs with no letter or digit (a-z, 0-9) right before it and, unless
 * it ends in `*`, none right after it: `buy` hits "buy" and "/buy?x" but not "buyer";
 * `scrap*` hits "scraper" and "scraping". Changing any list or the order changes the method version.
 */
export const CLASSIFIER_RULES: ReadonlyArray<{ category: Category; keywords: readonly string[] }> = Object.freeze([
  {
    category: 'scraping-extraction',
    keywords: [
      'scrap*',
      'crawl*',
      'extract*',
      'parse',
      'parser',
      'parsing',
      'ocr',
      'html to',
      'to markdown',
      'web page*',
      'webpage*',
    ],
  },
  {
    category: 'media-generation',
    keywords: [
      'image*',
      'video*',
      'audio',
      'music',
      'song*',
      'text-to-speech',
      'tts',
      'voice*',
      'meme*',
      'poster*',
      'qr',
      'qr-code*',
      'avatar*',
      'sticker*',
      'artwork*',
      'drawing*',
      'illustration*',
      'sora',
      'veo',
      'dall-e',
      'stable diffusion',
      'photo*',
      'logo*',
      'animation*',
    ],
  },
  {
    category: 'communications',
    keywords: [
      'email*',
      'e-mail*',
      'sms',
      'telegram',
      'discord',
      'whatsapp',
      'slack',
      'notify',
      'notification*',
      'newsletter*',
      'send message*',
      'send a message',
      'push message*',
      'tweet',
      'tweets',
      'post to',
      'cast to',
    ],
  },
  {
    category: 'verification-conformance',
    keywords: [
      'verif*',
      'validat*',
      'audit*',
      'compliance',
      'conformance',
      'kyc',
      'aml',
      'attest*',
      'fact-check*',
      'lint',
      'linter',
      'code review',
      'security scan*',
      'risk score*',
      'honeypot',
      'rug check*',
      'rugcheck',
      'trust score*',
      'reputation',
      'proof of',
      'sanction*',
    ],
  },
  {
    category: 'search-retrieval',
    keywords: [
      'search*',
      'lookup',
      'look up',
      'find',
      'finder',
      'retriev*',
      'rag',
      'semantic',
      'discover*',
      'index',
      'directory',
    ],
  },
  {
    category: 'storage-state',
    keywords: [
      'storage',
      'store',
      'upload*',
      'ipfs',
      'pinning',
      'persist*',
      'database',
      'kv',
      'key-value',
      'cache',
      'file hosting',
      'backup*',
      'cid',
      'pinata',
    ],
  },
  {
    category: 'payments-infrastructure',
    keywords: [
      'facilitator*',
      'invoice*',
      'payout*',
      'escrow',
      'paywall*',
      'checkout',
      'payment link*',
      'wallet*',
      'onramp',
      'offramp',
      'on-ramp',
      'off-ramp',
      'remittance',
      'settlement*',
      'tip',
      'tips',
      'subscri*',
      'top-up',
      'topup',
      'top_up',
      'donat*',
      'x402 proxy',
      'payment gateway',
      'payment api',
    ],
  },
  {
    category: 'trading-execution',
    keywords: [
      'swap*',
      'trade',
      'trades',
      'trader*',
      'buy',
      'buys',
      'sell',
      'sells',
      'mint',
      'mints',
      'minting',
      'bridge*',
      'order*',
      'execute*',
      'execution',
      'long or short',
      'snip*',
      'perp*',
      'leverage*',
      'dca',
      'arbitrage',
      'burn',
    ],
  },
  {
    category: 'data-access',
    keywords: [
      'price*',
      'weather',
      'news',
      'feed*',
      'market data',
      'stats',
      'statistic*',
      'analytics',
      'dashboard*',
      'metric*',
      'tvl',
      'pool*',
      'trending',
      'token info',
      'on-chain',
      'onchain',
      'oracle*',
      'data',
      'dataset*',
      'quote*',
      'balance*',
      'yield*',
      'signal*',
      'ohlc*',
      'candle*',
      'portfolio*',
      'leaderboard*',
      'score*',
      'polymarket',
      'prediction market*',
    ],
  },
  {
    category: 'inference',
    keywords: [
      'llm*',
      'gpt*',
      'claude',
      'gemini',
      'openai',
      'ai',
      'a.i.',
      'model',
      'models',
      'inference',
      'agent*',
      'chat*',
      'assistant*',
      'summar*',
      'analy*',
      'predict*',
      'research*',
      'sentiment',
      'prompt*',
      'question*',
      'answer*',
      'advice',
      'advisor*',
      'strateg*',
      'insight*',
      'recommend*',
      'translat*',
      'generate*',
      'writer',
    ],
  },
]);

interface CompiledRule {
  category: Category;
  pattern: RegExp;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// One regular expression per category, built once from the published lists above.
const COMPILED: readonly CompiledRule[] = CLASSIFIER_RULES.map(({ category, keywords }) => {
  const alternatives = keywords.map((k) =>
    k.endsWith('*') ? escapeRegExp(k.slice(0, -1)) : `${escapeRegExp(k)}(?![a-z0-9])`,
  );
  return { category, pattern: new RegExp(`(?<![a-z0-9])(?:${alternatives.join('|')})`) };
});

/** The auto category of a listing from its title, description and resource URL. Pure. */
export function classify(title: string | null, description: string | null, resourceUrl: string): Category {
  const text = [title ?? '', description ?? '', resourceUrl].join('\n').toLowerCase();
  for (const rule of COMPILED) if (rule.pattern.test(text)) return rule.category;
  return 'other';
}

const CATEGORY_SET: ReadonlySet<string> = new Set(CATEGORIES);

/**
 * The category an item names itself: the first of the candidates (metadata.category,
 * extensions.bazaar.info.category, then each tag in order) that, trimmed and lowercased, is one
 * of the 11 categories; null when none is.
 */
export function sellerAssertedCategory(candidates: ReadonlyArray<string | null | undefined>): Category | null {
  for (const candidate of candidates) {
    if (typeof candidate !== 'string') continue;
    const value = candidate.trim().toLowerCase();
    if (CATEGORY_SET.has(value)) return value as Category;
  }
  return null;
}
