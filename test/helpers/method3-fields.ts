/**
 * Method 3.0.0 added fields to every body the API serves (SPEC "Versions side by side": on a 1.x
 * or 2.x generation `by_class`, `internal`, the `external_*` numbers, an evidence row's `class` and
 * `internal_reason`, a market day's `external_volume_micro` and /meta's `classes` are null). A body
 * recorded by the code before 3.0.0 is therefore the body served now with those null fields taken
 * out, byte for byte: what this returns. Only `"name":null` pairs of these names are removed, so
 * any other difference (a number, an order, a field that is not null) still shows. The profile's
 * `operator_group` (migration 0038) is null on a generation computed before it, so it goes too.
 */
const NAMES = [
  'by_class',
  'internal',
  'external_revenue_30d_micro',
  'external_payments_30d',
  'external_payers_30d',
  'class',
  'internal_reason',
  'external_volume_micro',
  'classes',
  'x402_contract_pay_to',
  'operator_group',
].join('|');
const AFTER_COMMA = new RegExp(`,"(?:${NAMES})":null`, 'g');
const BEFORE_COMMA = new RegExp(`"(?:${NAMES})":null,`, 'g');

export function withoutMethod3Nulls(body: string): string {
  return body.replace(AFTER_COMMA, '').replace(BEFORE_COMMA, '');
}
