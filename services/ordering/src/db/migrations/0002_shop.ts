import { sql, type Kysely } from 'kysely';

/**
 * Catalogue and lookups of the shop (the `card-reservation`, `shop` and `battery` operations, docs/decisions.md §6):
 * - `articles` and `article_bom_items`: the ERP articles (filled by the demo loader now, by the ERP
 *   import later) with localized texts as jsonb keyed by culture (`en` mandatory: the fallback);
 * - `localized_countries`, `localized_product_options`: localized lists loaded by maintenance imports;
 * - `card_numbers`: claimed card numbers (SIID). The primary key on `service_id` is THE guarantee that two
 *   orders never get one number; the ranges of the card types are checked by the database as well;
 * - `battery_records`: battery dates of active cards (SIAC) for the public battery lookup.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table articles (
      id integer generated always as identity primary key,
      -- ERP numbers are free text; commas would break the comma-separated filter of the listing.
      article_number text not null unique
        check (length(article_number) between 1 and 64 and article_number = btrim(article_number) and article_number !~ '[,[:cntrl:]]'),
      erp_id text,
      erp_version text,
      is_shop_article boolean not null default false,
      user_group text not null default 'public' check (user_group in ('public', 'retailer', 'internal')),
      category text,
      name jsonb not null check (jsonb_typeof(name) = 'object' and name ? 'en'),
      description jsonb not null default '{}' check (jsonb_typeof(description) = 'object'),
      net_price_cents bigint not null check (net_price_cents >= 0),
      currency char(3) not null default 'EUR' check (currency ~ '^[A-Z]{3}$'),
      vat_rate_percent numeric(5, 2) not null check (vat_rate_percent >= 0 and vat_rate_percent <= 100),
      card_type text check (card_type in ('sicard9', 'sicard10', 'siac1')),
      is_subitem_only boolean not null default false,
      configurable_attributes jsonb not null default '[]' check (jsonb_typeof(configurable_attributes) = 'array'),
      image_url text,
      sort_order integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index articles_shop_idx on articles (sort_order, article_number) where is_shop_article`.execute(db);
  await sql`create unique index articles_erp_id_key on articles (erp_id) where erp_id is not null`.execute(db);

  await sql`
    create table article_bom_items (
      main_article_number text not null references articles (article_number) on update cascade on delete cascade,
      position integer not null check (position >= 1),
      default_article_number text not null,
      valid_article_numbers text[] not null check (cardinality(valid_article_numbers) >= 1),
      quantity integer not null default 1 check (quantity between 1 and 1000),
      default_configuration jsonb not null default '{}' check (jsonb_typeof(default_configuration) = 'object'),
      is_locked boolean not null default false,
      is_configurable boolean not null default false,
      is_optional boolean not null default false,
      excluded_custom_attributes text[] not null default '{}',
      primary key (main_article_number, position),
      check (default_article_number = any (valid_article_numbers)),
      check (not (is_locked and is_optional))
    )`.execute(db);
  // "Which sets can this article be a sub item of" (sub item listings, ERP re-imports).
  await sql`create index article_bom_items_valid_idx on article_bom_items using gin (valid_article_numbers)`.execute(db);

  await sql`
    create table localized_countries (
      culture text not null,
      country_code char(2) not null check (country_code ~ '^[A-Z]{2}$'),
      name text not null check (length(name) between 1 and 100),
      primary key (culture, country_code)
    )`.execute(db);

  await sql`
    create table localized_product_options (
      culture text not null,
      attribute_key text not null,
      label text not null,
      options jsonb not null default '[]' check (jsonb_typeof(options) = 'array'),
      primary key (culture, attribute_key)
    )`.execute(db);

  await sql`
    create table card_numbers (
      service_id integer primary key,
      card_type text not null check (card_type in ('sicard9', 'sicard10', 'siac1')),
      state text not null default 'reserved' check (state in ('reserved', 'sold')),
      order_ref text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check (
        (card_type = 'sicard9' and service_id between 1000000 and 1999999)
        or (card_type = 'sicard10' and service_id between 7000001 and 7999999)
        or (card_type = 'siac1' and service_id between 8000001 and 8999999)
      )
    )`.execute(db);
  await sql`create index card_numbers_order_ref_idx on card_numbers (order_ref) where order_ref is not null`.execute(db);

  await sql`
    create table battery_records (
      card_number integer primary key check (card_number between 8000001 and 8999999),
      battery_date date,
      updated_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table battery_records, card_numbers, localized_product_options, localized_countries, article_bom_items, articles`.execute(db);
}
