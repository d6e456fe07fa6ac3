import { z } from 'zod';
import { Address, components, Count, Micro, NextCursor, Snapshot } from './common.ts';

/**
 * The bodies of the operator groups and the market summary (issue 23; docs/api.md, docs/METHOD.md
 * 2.12): outputs the method computes with the generation, since migration 0038. A generation
 * computed before it has none: `computed` is then false.
 */

const Computed = z.boolean().meta({
  description:
    'whether the generation has this output: false for a generation computed before it existed (migration 0038), whose lists are then empty and whose numbers null',
});

export const OperatorGroupId = z
  .string()
  .regex(/^op_[0-9a-f]{40}$/)
  .meta({ description: 'op_ + the lowest member address (byte order) without 0x' });

export const OperatorGroup = z.strictObject({
  id: OperatorGroupId,
  seller_count: Count.meta({ description: 'members: sellers of the generation, two or more' }),
  sellers: z.array(Address).meta({ description: 'the member addresses, in byte order' }),
  hosts: z.array(z.string()).meta({
    description: 'the resource hosts that link them: each a host of base_usdc listings of two or more members',
  }),
  payments_30d: Count.meta({ description: "the members' verified payments in the window, summed" }),
  payers_30d: Count.meta({
    description: 'distinct payer addresses of all members together in the window (not a sum of the members’ payers)',
  }),
  verified_revenue_30d_micro: Micro.meta({ description: "the members' verified revenue, summed" }),
  external_revenue_30d_micro: Micro.nullable().meta({
    description: "the members' external revenue, summed (method 3.x); null on 1.x and 2.x generations",
  }),
});
components.add(OperatorGroup, { id: 'OperatorGroup' });

export const OperatorsPage = z.strictObject({
  count: Count,
  next_cursor: NextCursor,
  ...Snapshot,
  computed: Computed,
  groups: z
    .array(OperatorGroup)
    .meta({ description: 'by verified_revenue_30d_micro descending, then id (byte order)' }),
});
components.add(OperatorsPage, { id: 'OperatorsPage' });

export const OperatorMember = z.strictObject({
  seller_address: Address,
  slug: Address,
  tier: z.enum(['verified', 'listed_only']),
  evidence_state: z.enum(['verified', 'insufficient', 'not_observed']),
  rank: z.int().positive().nullable(),
  payments_30d: Count,
  payers_30d: Count,
  verified_revenue_30d_micro: Micro,
  external_revenue_30d_micro: Micro.nullable().meta({ description: 'method 3.x; null on 1.x and 2.x generations' }),
});
components.add(OperatorMember, { id: 'OperatorMember' });

export const OperatorGroupDetail = z.strictObject({
  ...Snapshot,
  ...OperatorGroup.shape,
  members: z
    .array(OperatorMember)
    .meta({ description: 'each member with its own numbers (gen_sellers), by seller_address (byte order)' }),
});
components.add(OperatorGroupDetail, { id: 'OperatorGroupDetail' });

const Period = z
  .strictObject({
    first_day: z.iso.date().meta({ description: 'the first UTC day of the period' }),
    last_day: z.iso.date().meta({ description: 'the last UTC day of the period (included)' }),
    days: Count.meta({
      description: 'publishable UTC days in the period (7, or 30, or fewer when the generation has fewer)',
    }),
    payments: Count.meta({ description: 'verified payments of those days, summed' }),
    volume_micro: Micro.meta({ description: 'their value, summed' }),
    external_volume_micro: Micro.nullable().meta({
      description: 'the external payments’ value (method 3.x); null on 1.x and 2.x generations',
    }),
    payers: Count.meta({ description: 'distinct payers over the whole period (not a sum of the days’ payers)' }),
    sellers_paid: Count.meta({ description: 'distinct sellers paid over the whole period' }),
  })
  .nullable()
  .meta({ description: 'null when the period has no publishable day' });

const Change = z.number().nullable().meta({
  description:
    '(last_7d - prev_7d) / prev_7d as a fraction (0.25 = +25%), rounded to 6 decimals; null unless both periods have 7 days and prev_7d is above 0',
});

export const MarketSummary = z.strictObject({
  ...Snapshot,
  computed: Computed,
  periods: z
    .strictObject({
      last_7d: Period.meta({ description: 'the 7 latest publishable days' }),
      prev_7d: Period.meta({ description: 'the 7 publishable days before them' }),
      last_30d: Period.meta({ description: 'the 30 latest publishable days (or as many as the generation has)' }),
    })
    .meta({ description: 'the periods, over the publishable days of /api/v1/market/daily' }),
  change: z
    .strictObject({
      payments: Change,
      volume: Change,
      external_volume: Change,
      payers: Change,
      sellers_paid: Change,
    })
    .meta({ description: 'the change of each number of last_7d against prev_7d (external_volume: method 3.x)' }),
});
components.add(MarketSummary, { id: 'MarketSummary' });
