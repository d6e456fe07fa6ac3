/**
 * `GET /llms.txt`: a short plain-text guide to this API for language models (the llms.txt
 * convention: a title, a summary, then sections of links with a line each). Static text.
 */
export const LLMS_TXT = `# x402-tally

> Verified 30-day revenue of the paid APIs of the x402 Bazaar, recomputed from Base USDC settlements on chain and published as immutable, numbered generations. Read-only JSON API and MCP server.

## What the numbers mean
- Money is in micro-USDC: 1 USDC = 1000000. Integers are exact, even above 2^53.
- Numbers are attributed to the seller: the address a listing is paid at. Every listing of a seller carries the same numbers; they are not per listing.
- "Verified" means counted from the chain: Base USDC Transfer logs to the seller whose transaction also emitted AuthorizationUsed by the payer (an EIP-3009 x402 settlement). Other settlement schemes are not counted by method 1.x.
- evidence_state: verified (enough payments from enough distinct payers in the window; see constants in /api/v1/meta), insufficient (some payments, too few), not_observed (none). tier is verified only for evidence_state verified; everything else is listed_only.
- farm_flag 1 marks a seller with too many listings or whose revenue comes mostly from one payer; farm_reasons says which.
- title, description and category are claims of the catalog, not verified facts.
- The window is the 30 days up to the as-of block of the generation (/api/v1/meta: as_of, window). A generation never changes once published.

## API
- [Meta](/api/v1/meta): generation, as-of block, window, constants, freshness, retained generations
- [Directory and search](/api/v1/sellers): one row per listing; ?q=words searches title, description and resource URL; ?category=, ?tier=verified
- [Rankings](/api/v1/rankings): verified sellers by 30-day verified revenue
- [Seller](/api/v1/sellers/{address}): metrics, each with the provenance to recompute it, and the seller's listings
- [Seller daily](/api/v1/sellers/{address}/daily): the seller's payments, revenue and payers per UTC day of the window
- [Seller payments](/api/v1/sellers/{address}/payments): the verified payments behind the seller's numbers
- [Seller periods](/api/v1/sellers/{address}/periods): the per-hour evidence digests the seller's digest is composed of (method 2.x)
- [Market](/api/v1/market/daily): daily market aggregate
- [Audit bundle](/api/v1/generations/{generation}/bundle/{file}): manifest.json and the files it lists, to recompute a generation with: npx x402-tally audit --bundle DIR
- [OpenAPI](/api/v1/openapi.json): every endpoint, parameter and field, described
- Pages follow next_cursor until it is null. Errors are JSON {"error": {"code", "message"}}; the message names the bad parameter.

## MCP
- Streamable HTTP at /mcp (POST one JSON-RPC message, no batches; stateless, read-only). Over stdio: npx x402-tally mcp
- Tools: search_listings, get_seller, top_sellers, market_daily, explain_metric

## How to cite
- Name the generation and method_version of the answer, e.g. "x402-tally generation 42 (method 1.0.0), as of Base block 23000000".
- Pass ?generation=42 (or the tools' generation argument) to read the same numbers again while that generation is retained.
- To check a number yourself: npx x402-tally audit --generation 42 --seller 0x... recomputes it from the chain.
`;
