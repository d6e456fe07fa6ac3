import { seller } from './fake-addresses.ts';

/**
 * A Bazaar-shaped catalog for the benchmarks' fake chains (bench/cron.ts, bench/indexer.ts
 * --whole): one Base USDC listing per seller `seller(i)`, each on its own `.invalid` host, so the
 * run's catalog stage lists exactly the fake chain's sellers.
 */
export function benchCatalogItems(sellers: number, usdc: string): unknown[] {
  return Array.from({ length: sellers }, (_, i) => ({
    x402Version: 2,
    type: 'http',
    resource: {
      url: `https://s${i}.bench.x402-tally.invalid/api`,
      description: `Benchmark seller ${i}`,
      mimeType: 'application/json',
    },
    accepts: [
      {
        scheme: 'exact',
        network: 'eip155:8453',
        amount: '1000',
        asset: usdc,
        payTo: seller(i),
        maxTimeoutSeconds: 60,
        extra: { name: 'USD Coin', version: '2' },
      },
    ],
    lastUpdated: '2025-12-30T00:00:00.000Z',
    metadata: { title: `Bench seller ${i}` },
  }));
}
