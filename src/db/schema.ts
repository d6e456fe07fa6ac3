import type {
  CatalogItemsTable,
  CatalogListingWordsTable,
  CatalogListingsTable,
  CatalogRejectsTable,
  CatalogSnapshotSellersTable,
  CatalogSnapshotsTable,
  CatalogWordBandsTable,
} from './schema/catalog.ts';
import type {
  AddressesTable,
  AddressPruneDueTable,
  BatchChannelCreatedTable,
  BatchChannelsTable,
  BatchClaimsTable,
  BlocksTable,
  SellerCoverageTable,
  SellerOutgoingTable,
  TransferFactsView,
  TransfersTable,
  X402InfrastructureTable,
} from './schema/facts.ts';
import type {
  BundleFilesTable,
  GenEdgePeriodsTable,
  GenListingsTable,
  GenMarketDailyTable,
  GenMarketSummaryTable,
  GenOperatorGroupsTable,
  GenOperatorMembersTable,
  GenOutputsTable,
  GenPeriodsTable,
  GenSellerDailyTable,
  GenSellerPeriodsTable,
  GenSellersTable,
  GenerationPaymentsView,
  GenerationsTable,
  PublishedPointerTable,
  SellerDailyRowsTable,
} from './schema/generations.ts';
import type {
  AccDayPayersTable,
  AccMarketDaysTable,
  AccMarketOpenTable,
  AccMarketStateTable,
  AccMarketSummaryTable,
  AccOperatorPairsTable,
  AccPayersTable,
  AccReasonPayersTable,
  AccReasonSellersTable,
  AccSellerClassesTable,
  AccSellerDaysTable,
  AccSellersTable,
  AccStateTable,
  AccValuesTable,
  PartEdgeLinesTable,
  PartHoursTable,
  PartSellerDigestsTable,
  PartSellerHoursTable,
  PartSellerLinesTable,
  PartSellersTable,
  PartStateTable,
} from './schema/work-state.ts';

/**
 * Row types of the tables in sql/migrations, for Kysely: one interface a table or view, in
 * src/db/schema/ by area (catalog.ts, facts.ts, generations.ts, work-state.ts; the column types in
 * columns.ts). This file assembles them into the Schema interface and re-exports them: importers
 * name only src/db/schema.ts.
 */

export type * from './schema/catalog.ts';
export type * from './schema/facts.ts';
export * from './schema/generations.ts';
export type * from './schema/work-state.ts';

export interface Schema {
  catalog_snapshots: CatalogSnapshotsTable;
  catalog_items: CatalogItemsTable;
  catalog_listings: CatalogListingsTable;
  catalog_rejects: CatalogRejectsTable;
  addresses: AddressesTable;
  address_prune_due: AddressPruneDueTable;
  blocks: BlocksTable;
  transfers: TransfersTable;
  batch_channels: BatchChannelsTable;
  batch_channel_created: BatchChannelCreatedTable;
  batch_claims: BatchClaimsTable;
  seller_outgoing: SellerOutgoingTable;
  transfer_facts: TransferFactsView;
  seller_coverage: SellerCoverageTable;
  generations: GenerationsTable;
  published_pointer: PublishedPointerTable;
  gen_sellers: GenSellersTable;
  gen_listings: GenListingsTable;
  catalog_listing_words: CatalogListingWordsTable;
  catalog_word_bands: CatalogWordBandsTable;
  gen_market_daily: GenMarketDailyTable;
  gen_seller_daily: GenSellerDailyTable;
  gen_edge_periods: GenEdgePeriodsTable;
  gen_edge_seller_periods: GenEdgePeriodsTable & { seller_address: string };
  gen_periods: GenPeriodsTable;
  gen_seller_periods: GenSellerPeriodsTable;
  part_state: PartStateTable;
  part_sellers: PartSellersTable;
  part_seller_hours: PartSellerHoursTable;
  part_hours: PartHoursTable;
  generation_payments: GenerationPaymentsView;
  acc_state: AccStateTable;
  acc_sellers: AccSellersTable;
  acc_values: AccValuesTable;
  acc_payers: AccPayersTable;
  acc_day_payers: AccDayPayersTable;
  acc_seller_days: AccSellerDaysTable;
  acc_market_days: AccMarketDaysTable;
  acc_market_state: AccMarketStateTable;
  acc_market_open: AccMarketOpenTable;
  acc_seller_classes: AccSellerClassesTable;
  acc_reason_payers: AccReasonPayersTable;
  acc_reason_sellers: AccReasonSellersTable;
  acc_operator_pairs: AccOperatorPairsTable;
  seller_daily_rows: SellerDailyRowsTable;
  gen_seller_daily_fixed: GenSellerDailyTable;
  gen_listings_fixed: GenListingsTable;
  part_seller_digests: PartSellerDigestsTable;
  part_seller_lines: PartSellerLinesTable;
  part_edge_lines: PartEdgeLinesTable;
  catalog_snapshot_sellers: CatalogSnapshotSellersTable;
  bundle_files: BundleFilesTable;
  x402_infrastructure: X402InfrastructureTable;
  gen_outputs: GenOutputsTable;
  gen_operator_groups: GenOperatorGroupsTable;
  gen_operator_members: GenOperatorMembersTable;
  gen_market_summary: GenMarketSummaryTable;
  acc_market_summary: AccMarketSummaryTable;
}
