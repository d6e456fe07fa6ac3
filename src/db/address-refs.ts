/**
 * Every (table, column) that holds an `addresses.address_id`: the exhaustive list of what refers
 * to the addresses dictionary (docs/data-model.md, "The addresses dictionary, bounded").
 * `pruneGenerations` (src/publish/prune.ts) deletes the addresses that none of these columns
 * names, so a column missing here would lose its addresses: `src/db/address-refs.test.ts` fails
 * when a table of the schema has an integer `*_id` column, an integer array `*_ids` column (or a
 * foreign key to `addresses`) that is neither listed here nor in its list of ids that are not
 * address ids.
 *
 * Adding a column that refers to addresses: one line here (the table with the column, not a view;
 * a partitioned table, not its partitions). Nothing else changes.
 */
export interface AddressRef {
  readonly table: string;
  readonly column: string;
  /** The column is an array of address ids (an integer array named `*_ids`), not one id. */
  readonly array?: true;
}

export const ADDRESS_REFS: readonly AddressRef[] = [
  { table: 'transfers', column: 'from_id' },
  { table: 'transfers', column: 'to_id' },
  // method 3.0.0's streams (migration 0029)
  { table: 'batch_claims', column: 'from_id' },
  { table: 'batch_claims', column: 'to_id' },
  { table: 'seller_outgoing', column: 'from_id' },
  { table: 'seller_outgoing', column: 'to_id' },
  { table: 'batch_channels', column: 'payer_id' },
  { table: 'batch_channels', column: 'payer_authorizer_id' },
  { table: 'batch_channels', column: 'receiver_id' },
  { table: 'batch_channels', column: 'receiver_authorizer_id' },
  { table: 'batch_channels', column: 'token_id' },
  // the method's work state (migration 0028)
  { table: 'acc_sellers', column: 'seller_id' },
  { table: 'acc_values', column: 'seller_id' },
  { table: 'acc_payers', column: 'seller_id' },
  { table: 'acc_payers', column: 'payer_id' },
  { table: 'acc_day_payers', column: 'seller_id' },
  { table: 'acc_day_payers', column: 'payer_ids', array: true }, // (arrays since migration 0050)
  { table: 'acc_seller_days', column: 'seller_id' },
  { table: 'part_sellers', column: 'seller_id' },
  { table: 'part_seller_digests', column: 'seller_id' },
  { table: 'part_seller_lines', column: 'seller_id' },
  { table: 'part_edge_lines', column: 'seller_id' },
  // the versioned rows that retained generations read (migration 0033)
  { table: 'part_seller_hours', column: 'seller_id' },
  { table: 'seller_daily_rows', column: 'seller_id' },
  // method 3.0.0's work state (migration 0031)
  { table: 'acc_seller_classes', column: 'seller_id' },
  { table: 'acc_reason_payers', column: 'seller_id' },
  { table: 'acc_reason_payers', column: 'payer_id' },
  { table: 'acc_reason_sellers', column: 'seller_id' },
  { table: 'acc_operator_pairs', column: 'seller_id' },
  { table: 'acc_operator_pairs', column: 'payer_id' },
  // the market summary's day sets (migration 0038), arrays in the day's row since 0045
  { table: 'acc_market_days', column: 'payer_ids', array: true },
  { table: 'acc_market_days', column: 'seller_ids', array: true },
];
