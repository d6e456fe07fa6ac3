/**
 * `GET /llms.txt`: a short plain-text guide to this API for language models (the llms.txt
 * convention: a title, a summary, then sections of links with a line each). Static text, and a
 * section on what the latest generation serves (llmsTxt).
 */
export const LLMS_TXT = `# x402-tally

> Verified 30-day revenue of the paid APIs of the x402 Bazaar, recomputed from Base USDC settlements on chain and published as immutable, numbered generations. Read-only JSON API and MCP server.

## What the numbers mean
- Money is in micro-USDC: 1 USDC = 1000000. Integers are exact, even above 2^53.
- Numbers are attributed to the seller: the address a listing is paid at. Every listing of a seller carries the same numbers; they are not per listing.
- "Verified" means counted from the chain. Methods 1.x and 2.x count one way to settle: a Base USDC Transfer to the seller whose transaction also emitted AuthorizationUsed by the payer (EIP-3009). Method 3.0.0 counts every x402 settlement scheme live on Base, each payment with its class: eip3009, permit2_exact and permit2_upto (the canonical x402 Permit2 proxies), batch_settlement (a claim of a payment channel, one payment however many requests it sums). /api/v1/meta lists each class's contracts and topic0 under classes.
- External revenue (method 3.0.0): the part of verified revenue that did not come back from the seller's own side. A payment is internal when the seller had paid the payer in USDC shortly before (seller_funded) or when the payer is a seller of a listing on a host of this seller's listings (same_operator).
- evidence_state: verified (enough payments from enough distinct payers in the window; see constants in /api/v1/meta), insufficient (some payments, too few), not_observed (none). tier is verified only for evidence_state verified; everything else is listed_only.
- farm_flag 1 marks a seller with too many listings or whose revenue comes mostly from one payer; farm_reasons says which.
- title, description and category are claims of the catalog, not verified facts.
- The window is the 30 days up to the as-of block of the generation (/api/v1/meta: as_of, window). A generation never changes once published.

## API
- [Meta](/api/v1/meta): generation, as-of block, window, constants, freshness, retained generations
- [Directory and search](/api/v1/sellers): one row per listing; ?q=words searches title, description and resource URL; ?category=, ?tier=verified
- [Seller directory](/api/v1/directory): every seller, verified or not, one row per seller; ?sort=verified_revenue|external_revenue|payments|payers; filters ?category=, ?evidence_state=, ?farm_flag=0|1, ?class= (method 3.0.0), ?q=words or an address prefix (6+ hex digits); total counts the matches
- [Rankings](/api/v1/rankings): verified sellers by 30-day verified revenue; ?sort=external_revenue ranks them by external revenue (method 3.0.0); rows carry external_revenue_30d_micro, external_payments_30d, external_payers_30d
- [Seller](/api/v1/sellers/{address}): metrics, each with the provenance to recompute it, and the seller's listings; under method 3.0.0 also external_* metrics, by_class (payments and revenue per class) and internal (per reason)
- [Seller daily](/api/v1/sellers/{address}/daily): the seller's payments, revenue and payers per UTC day of the window
- [Seller payments](/api/v1/sellers/{address}/payments): the verified payments behind the seller's numbers, each with its class and internal_reason (method 3.0.0)
- [Seller periods](/api/v1/sellers/{address}/periods): the per-hour evidence digests the seller's digest is composed of (method 2.x)
- [Market](/api/v1/market/daily): daily market aggregate; external_volume_micro under method 3.0.0
- [Market summary](/api/v1/market/summary): the last 7 days, the 7 before and the last 30: payments, volume, distinct payers and sellers paid per period, and the change of the last 7 days
- [Operator groups](/api/v1/operators): sellers linked by a shared resource host, with summed revenue and distinct payers; /api/v1/operators/{id} for one group; a seller's group is operator_group in its profile
- [Audit bundle](/api/v1/generations/{generation}/bundle/{file}): manifest.json and the files it lists, to recompute a generation with (in a checkout of x402-tally): npx x402-tally audit --bundle DIR
- [OpenAPI](/api/v1/openapi.json): every endpoint, parameter and field, described
- Pages follow next_cursor until it is null. Errors are JSON {"error": {"code", "message"}}; the message names the bad parameter.

## MCP
- Streamable HTTP at /mcp (POST one JSON-RPC message, no batches; stateless, read-only). Over stdio (in a checkout of x402-tally): npx x402-tally mcp
- Tools: search_listings, get_seller (a card under 2 KB; detail: true for the whole profile), top_sellers (sort: verified_revenue or external_revenue), market_daily, market_summary, explain_metric, status (freshness and retained generations)

## How to cite
- Name the generation and method_version of the answer, e.g. "x402-tally generation 42 (method 1.0.0), as of Base block 23000000".
- Pass ?generation=42 (or the tools' generation argument) to read the same numbers again while that generation is retained.
- To check a number yourself, in a checkout of x402-tally: npx x402-tally audit --generation 42 --seller 0x... recomputes it from the chain.
`;

/** What the latest published generation serves, for the guide's last section. */
export interface LatestServed {
  readonly generation: number;
  readonly methodVersion: string;
}

/** The guide with a last section on what the latest generation serves (null: none published yet). */
export function llmsTxt(latest: LatestServed | null): string {
  return `${LLMS_TXT}\n## Served now\n${servedNow(latest)}\n`;
}

function servedNow(latest: LatestServed | null): string {
  if (latest === null)
    return '- No generation is published yet: the API answers 503 no_generation until the first run.';
  const head = `- The latest generation is ${latest.generation}, computed by method ${latest.methodVersion}.`;
  const major = Number(/^(\d+)\./.exec(latest.methodVersion)?.[1] ?? 0);
  if (major >= 3)
    return (
      `${head} Its numbers count every settlement class. Read by_class and internal in each seller profile, ` +
      'external_revenue_30d_micro on ranking rows, and /api/v1/rankings?sort=external_revenue for the sellers by external revenue.'
    );
  return (
    `${head} It counts EIP-3009 settlements only: by_class, internal, the external_* numbers, class and internal_reason are null, ` +
    'and sort=external_revenue is a 400 on it.'
  );
}
