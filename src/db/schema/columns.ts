import type { ColumnType } from 'kysely';

/**
 * The column types of the row types in src/db/schema/ (the tables of sql/migrations). Database
 * values arrive as: int8 and integral numeric -> bigint, int4/int2 -> number, timestamptz -> Date,
 * jsonb -> parsed JSON, text[] -> string[].
 */
export type Int8 = ColumnType<bigint, bigint | number | string, bigint | number | string>;
/** A nullable int8 that an insert may leave out (null). */
export type NullInt8 = ColumnType<
  bigint | null,
  bigint | number | string | null | undefined,
  bigint | number | string | null
>;
export type Micro = ColumnType<bigint, bigint | string, bigint | string>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type Bytes = ColumnType<Uint8Array, Uint8Array, Uint8Array>;
