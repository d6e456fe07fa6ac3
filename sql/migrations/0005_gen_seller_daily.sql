-- The daily series of each seller (SPEC section 2, "Daily series", method 2.x): one row per UTC
-- day of the window on which the seller has at least one verified payment in the window, with
-- that day's payments, revenue and distinct payers. The two edge days of the window are partial
-- (they hold only the window's own payments). Rows of a generation never change once published.
create table gen_seller_daily (
  generation      integer       not null references generations on delete cascade,
  seller_address  text          not null,
  day             date          not null,
  payments        integer       not null,
  revenue_micro   numeric(78,0) not null,
  payers          integer       not null,
  primary key (generation, seller_address, day)
);
