--
-- PostgreSQL database dump
--

\restrict


SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: ordering; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA ordering;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: article_bom_items; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.article_bom_items (
    main_article_number text NOT NULL,
    "position" integer NOT NULL,
    default_article_number text NOT NULL,
    valid_article_numbers text[] NOT NULL,
    quantity integer DEFAULT 1 NOT NULL,
    default_configuration jsonb DEFAULT '{}'::jsonb NOT NULL,
    is_locked boolean DEFAULT false NOT NULL,
    is_configurable boolean DEFAULT false NOT NULL,
    is_optional boolean DEFAULT false NOT NULL,
    excluded_custom_attributes text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT article_bom_items_check CHECK ((default_article_number = ANY (valid_article_numbers))),
    CONSTRAINT article_bom_items_check1 CHECK ((NOT (is_locked AND is_optional))),
    CONSTRAINT article_bom_items_default_configuration_check CHECK ((jsonb_typeof(default_configuration) = 'object'::text)),
    CONSTRAINT article_bom_items_position_check CHECK (("position" >= 1)),
    CONSTRAINT article_bom_items_quantity_check CHECK (((quantity >= 1) AND (quantity <= 1000))),
    CONSTRAINT article_bom_items_valid_article_numbers_check CHECK ((cardinality(valid_article_numbers) >= 1))
);


--
-- Name: articles; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.articles (
    id integer NOT NULL,
    article_number text NOT NULL,
    erp_id text,
    erp_version text,
    is_shop_article boolean DEFAULT false NOT NULL,
    user_group text DEFAULT 'public'::text NOT NULL,
    category text,
    name jsonb NOT NULL,
    description jsonb DEFAULT '{}'::jsonb NOT NULL,
    net_price_cents bigint NOT NULL,
    currency character(3) DEFAULT 'EUR'::bpchar NOT NULL,
    vat_rate_percent numeric(5,2) NOT NULL,
    card_type text,
    is_subitem_only boolean DEFAULT false NOT NULL,
    configurable_attributes jsonb DEFAULT '[]'::jsonb NOT NULL,
    image_url text,
    sort_order integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT articles_article_number_check CHECK ((((length(article_number) >= 1) AND (length(article_number) <= 64)) AND (article_number = btrim(article_number)) AND (article_number !~ '[,[:cntrl:]]'::text))),
    CONSTRAINT articles_card_type_check CHECK ((card_type = ANY (ARRAY['sicard9'::text, 'sicard10'::text, 'siac1'::text]))),
    CONSTRAINT articles_configurable_attributes_check CHECK ((jsonb_typeof(configurable_attributes) = 'array'::text)),
    CONSTRAINT articles_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT articles_description_check CHECK ((jsonb_typeof(description) = 'object'::text)),
    CONSTRAINT articles_name_check CHECK (((jsonb_typeof(name) = 'object'::text) AND (name ? 'en'::text))),
    CONSTRAINT articles_net_price_cents_check CHECK ((net_price_cents >= 0)),
    CONSTRAINT articles_user_group_check CHECK ((user_group = ANY (ARRAY['public'::text, 'retailer'::text, 'internal'::text]))),
    CONSTRAINT articles_vat_rate_percent_check CHECK (((vat_rate_percent >= (0)::numeric) AND (vat_rate_percent <= (100)::numeric)))
);


--
-- Name: articles_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.articles ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.articles_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: battery_records; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.battery_records (
    card_number integer NOT NULL,
    battery_date date,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT battery_records_card_number_check CHECK (((card_number >= 8000001) AND (card_number <= 8999999)))
);


--
-- Name: card_numbers; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.card_numbers (
    service_id integer NOT NULL,
    card_type text NOT NULL,
    state text DEFAULT 'reserved'::text NOT NULL,
    order_ref text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT card_numbers_card_type_check CHECK ((card_type = ANY (ARRAY['sicard9'::text, 'sicard10'::text, 'siac1'::text]))),
    CONSTRAINT card_numbers_check CHECK ((((card_type = 'sicard9'::text) AND ((service_id >= 1000000) AND (service_id <= 1999999))) OR ((card_type = 'sicard10'::text) AND ((service_id >= 7000001) AND (service_id <= 7999999))) OR ((card_type = 'siac1'::text) AND ((service_id >= 8000001) AND (service_id <= 8999999))))),
    CONSTRAINT card_numbers_state_check CHECK ((state = ANY (ARRAY['reserved'::text, 'sold'::text])))
);


--
-- Name: discount_campaigns; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.discount_campaigns (
    id integer NOT NULL,
    name text NOT NULL,
    description text,
    kind text NOT NULL,
    percent numeric(5,2),
    amount_cents bigint,
    currency character(3) NOT NULL,
    valid_from timestamp with time zone,
    valid_to timestamp with time zone,
    minimum_order_net_cents bigint DEFAULT 0 NOT NULL,
    restricted_article_numbers text[] DEFAULT '{}'::text[] NOT NULL,
    max_redemptions_per_code integer NOT NULL,
    created_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT discount_campaigns_check CHECK ((((kind = 'percent'::text) AND (percent > (0)::numeric) AND (percent <= (100)::numeric) AND (amount_cents IS NULL)) OR ((kind = 'fixedAmount'::text) AND (amount_cents > 0) AND (percent IS NULL)))),
    CONSTRAINT discount_campaigns_check1 CHECK (((valid_from IS NULL) OR (valid_to IS NULL) OR (valid_to > valid_from))),
    CONSTRAINT discount_campaigns_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT discount_campaigns_kind_check CHECK ((kind = ANY (ARRAY['percent'::text, 'fixedAmount'::text]))),
    CONSTRAINT discount_campaigns_max_redemptions_per_code_check CHECK ((max_redemptions_per_code >= 1)),
    CONSTRAINT discount_campaigns_minimum_order_net_cents_check CHECK ((minimum_order_net_cents >= 0)),
    CONSTRAINT discount_campaigns_name_check CHECK (((length(name) >= 1) AND (length(name) <= 100)))
);


--
-- Name: discount_campaigns_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.discount_campaigns ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.discount_campaigns_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: discount_codes; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.discount_codes (
    id integer NOT NULL,
    campaign_id integer NOT NULL,
    code text NOT NULL,
    max_redemptions integer NOT NULL,
    redemptions integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT discount_codes_check CHECK (((redemptions >= 0) AND (redemptions <= max_redemptions))),
    CONSTRAINT discount_codes_code_check CHECK ((code ~ '^[A-Z0-9-]{4,42}$'::text)),
    CONSTRAINT discount_codes_max_redemptions_check CHECK ((max_redemptions >= 1))
);


--
-- Name: discount_codes_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.discount_codes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.discount_codes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: discount_redemptions; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.discount_redemptions (
    code_id integer NOT NULL,
    order_id integer NOT NULL,
    net_amount_cents bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    released_at timestamp with time zone,
    CONSTRAINT discount_redemptions_net_amount_cents_check CHECK ((net_amount_cents >= 0))
);


--
-- Name: email_verifications; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.email_verifications (
    id bigint NOT NULL,
    user_id integer NOT NULL,
    email text NOT NULL,
    token_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);


--
-- Name: email_verifications_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.email_verifications ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.email_verifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: erp_api_tokens; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.erp_api_tokens (
    erp_system text NOT NULL,
    ciphertext text NOT NULL,
    key_version smallint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text,
    CONSTRAINT erp_api_tokens_erp_system_check CHECK ((erp_system = ANY (ARRAY['weclapp'::text, 'weclappSandbox'::text]))),
    CONSTRAINT erp_api_tokens_key_version_check CHECK (((key_version >= 1) AND (key_version <= 255)))
);


--
-- Name: erp_webhook_jobs; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.erp_webhook_jobs (
    id bigint NOT NULL,
    erp_system text NOT NULL,
    entity_name text NOT NULL,
    entity_id text NOT NULL,
    last_type text NOT NULL,
    generation integer DEFAULT 1 NOT NULL,
    deliveries integer DEFAULT 1 NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    locked_until timestamp with time zone,
    last_error text,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT erp_webhook_jobs_entity_id_check CHECK (((length(entity_id) >= 1) AND (length(entity_id) <= 64))),
    CONSTRAINT erp_webhook_jobs_entity_name_check CHECK (((length(entity_name) >= 1) AND (length(entity_name) <= 64))),
    CONSTRAINT erp_webhook_jobs_erp_system_check CHECK ((erp_system = ANY (ARRAY['weclapp'::text, 'weclappSandbox'::text])))
);


--
-- Name: erp_webhook_jobs_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.erp_webhook_jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.erp_webhook_jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.idempotency_keys (
    scope text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    order_id integer,
    response_status integer,
    response_body json,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((length(key) >= 1) AND (length(key) <= 255)))
);


--
-- Name: kysely_migration; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.kysely_migration (
    name character varying(255) NOT NULL,
    "timestamp" character varying(255) NOT NULL
);


--
-- Name: kysely_migration_lock; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.kysely_migration_lock (
    id character varying(255) NOT NULL,
    is_locked integer DEFAULT 0 NOT NULL
);


--
-- Name: licenses; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.licenses (
    id uuid NOT NULL,
    seq bigint NOT NULL,
    product text NOT NULL,
    secret_hash text NOT NULL,
    email text,
    assigned_at timestamp with time zone,
    license_key text,
    key_issued_at timestamp with time zone,
    keys_issued integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT licenses_check CHECK (((email IS NULL) = (assigned_at IS NULL))),
    CONSTRAINT licenses_product_check CHECK ((product = ANY (ARRAY['sportidentConfigPlus'::text, 'sportidentCenterPro'::text, 'sportidentReaderApp'::text, 'resultsManager'::text])))
);


--
-- Name: licenses_seq_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.licenses ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.licenses_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: localized_countries; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.localized_countries (
    culture text NOT NULL,
    country_code character(2) NOT NULL,
    name text NOT NULL,
    CONSTRAINT localized_countries_country_code_check CHECK ((country_code ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT localized_countries_name_check CHECK (((length(name) >= 1) AND (length(name) <= 100)))
);


--
-- Name: localized_product_options; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.localized_product_options (
    culture text NOT NULL,
    attribute_key text NOT NULL,
    label text NOT NULL,
    options jsonb DEFAULT '[]'::jsonb NOT NULL,
    CONSTRAINT localized_product_options_options_check CHECK ((jsonb_typeof(options) = 'array'::text))
);


--
-- Name: maintenance_mode; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.maintenance_mode (
    singleton boolean DEFAULT true NOT NULL,
    enabled boolean DEFAULT false NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    changed_by text,
    CONSTRAINT maintenance_mode_singleton_check CHECK (singleton)
);


--
-- Name: order_items; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.order_items (
    id integer NOT NULL,
    order_id integer NOT NULL,
    parent_item_id integer,
    line_no integer NOT NULL,
    "position" integer NOT NULL,
    article_number text NOT NULL,
    article_name text NOT NULL,
    quantity integer NOT NULL,
    configuration jsonb DEFAULT '{}'::jsonb NOT NULL,
    article_bom_item_oid integer DEFAULT 0 NOT NULL,
    unit_net_price_cents bigint NOT NULL,
    net_amount_cents bigint NOT NULL,
    discount_net_cents bigint DEFAULT 0 NOT NULL,
    vat_rate_percent numeric(5,2) NOT NULL,
    vat_cents bigint NOT NULL,
    card_type text,
    card_number integer,
    CONSTRAINT order_items_article_bom_item_oid_check CHECK ((article_bom_item_oid >= 0)),
    CONSTRAINT order_items_card_type_check CHECK ((card_type = ANY (ARRAY['sicard9'::text, 'sicard10'::text, 'siac1'::text]))),
    CONSTRAINT order_items_check CHECK (((discount_net_cents >= 0) AND (discount_net_cents <= net_amount_cents))),
    CONSTRAINT order_items_check1 CHECK (((parent_item_id IS NULL) = (article_bom_item_oid = 0))),
    CONSTRAINT order_items_check2 CHECK (((card_number IS NULL) OR ((card_type IS NOT NULL) AND (quantity = 1)))),
    CONSTRAINT order_items_configuration_check CHECK ((jsonb_typeof(configuration) = 'object'::text)),
    CONSTRAINT order_items_line_no_check CHECK ((line_no >= 0)),
    CONSTRAINT order_items_net_amount_cents_check CHECK ((net_amount_cents >= 0)),
    CONSTRAINT order_items_position_check CHECK (("position" >= 0)),
    CONSTRAINT order_items_quantity_check CHECK (((quantity >= 1) AND (quantity <= 1000))),
    CONSTRAINT order_items_unit_net_price_cents_check CHECK ((unit_net_price_cents >= 0)),
    CONSTRAINT order_items_vat_cents_check CHECK ((vat_cents >= 0)),
    CONSTRAINT order_items_vat_rate_percent_check CHECK (((vat_rate_percent >= (0)::numeric) AND (vat_rate_percent <= (100)::numeric)))
);


--
-- Name: order_items_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.order_items ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.order_items_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: order_state_changes; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.order_state_changes (
    id bigint NOT NULL,
    order_id integer NOT NULL,
    from_state text,
    to_state text NOT NULL,
    actor text NOT NULL,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT order_state_changes_from_state_check CHECK ((from_state = ANY (ARRAY['pending_payment'::text, 'received'::text, 'paid'::text, 'transferred'::text, 'shipped'::text, 'completed'::text, 'cancelled'::text, 'refunded'::text]))),
    CONSTRAINT order_state_changes_to_state_check CHECK ((to_state = ANY (ARRAY['pending_payment'::text, 'received'::text, 'paid'::text, 'transferred'::text, 'shipped'::text, 'completed'::text, 'cancelled'::text, 'refunded'::text])))
);


--
-- Name: order_state_changes_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.order_state_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.order_state_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: orders; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.orders (
    id integer NOT NULL,
    order_number text NOT NULL,
    source text NOT NULL,
    state text NOT NULL,
    payment_method text NOT NULL,
    user_group text NOT NULL,
    created_by_kind text,
    created_by_id integer,
    erp_retailer_entity_id text,
    contact jsonb NOT NULL,
    shipping_address jsonb NOT NULL,
    shipping_country_id integer NOT NULL,
    billing_address jsonb,
    billing_country_id integer,
    billing_same_as_shipping boolean NOT NULL,
    discount_codes text[] DEFAULT '{}'::text[] NOT NULL,
    retailer_customer_order_reference text,
    notes text,
    currency character(3) NOT NULL,
    items_net_cents bigint NOT NULL,
    discount_cents bigint NOT NULL,
    shipping_net_cents bigint NOT NULL,
    net_total_cents bigint NOT NULL,
    vat_cents bigint NOT NULL,
    gross_total_cents bigint NOT NULL,
    vat_breakdown jsonb NOT NULL,
    courier text NOT NULL,
    paylink_url text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paylink_id integer,
    payment_transaction_id integer,
    erp_sales_order_id text,
    cancellation_reason text,
    late_payment_transaction_id integer,
    erp_create_started_at timestamp with time zone,
    payment_on_hold_at timestamp with time zone,
    CONSTRAINT orders_billing_address_check CHECK (((billing_address IS NULL) OR (jsonb_typeof(billing_address) = 'object'::text))),
    CONSTRAINT orders_billing_country_id_check CHECK (((billing_country_id >= 1) AND (billing_country_id <= 999))),
    CONSTRAINT orders_check CHECK (((discount_cents >= 0) AND (discount_cents <= items_net_cents))),
    CONSTRAINT orders_check1 CHECK ((net_total_cents = ((items_net_cents - discount_cents) + shipping_net_cents))),
    CONSTRAINT orders_check2 CHECK ((gross_total_cents = (net_total_cents + vat_cents))),
    CONSTRAINT orders_check3 CHECK (((billing_same_as_shipping AND (billing_address IS NULL) AND (billing_country_id IS NULL)) OR ((NOT billing_same_as_shipping) AND (billing_address IS NOT NULL) AND (billing_country_id IS NOT NULL)))),
    CONSTRAINT orders_check4 CHECK (((created_by_kind IS NULL) = (created_by_id IS NULL))),
    CONSTRAINT orders_contact_check CHECK (((jsonb_typeof(contact) = 'object'::text) AND (contact ? 'email'::text))),
    CONSTRAINT orders_courier_check CHECK ((courier = ANY (ARRAY['dhlParcel'::text, 'dhlParcelInternational'::text, 'ups'::text, 'fedex'::text, 'dhlExpress'::text]))),
    CONSTRAINT orders_created_by_kind_check CHECK ((created_by_kind = ANY (ARRAY['user'::text, 'client'::text]))),
    CONSTRAINT orders_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT orders_items_net_cents_check CHECK ((items_net_cents >= 0)),
    CONSTRAINT orders_payment_method_check CHECK ((payment_method = ANY (ARRAY['paylink'::text, 'invoice'::text]))),
    CONSTRAINT orders_shipping_address_check CHECK ((jsonb_typeof(shipping_address) = 'object'::text)),
    CONSTRAINT orders_shipping_country_id_check CHECK (((shipping_country_id >= 1) AND (shipping_country_id <= 999))),
    CONSTRAINT orders_shipping_net_cents_check CHECK ((shipping_net_cents >= 0)),
    CONSTRAINT orders_source_check CHECK ((source = ANY (ARRAY['shop'::text, 'cardOrder'::text]))),
    CONSTRAINT orders_state_check CHECK ((state = ANY (ARRAY['pending_payment'::text, 'received'::text, 'paid'::text, 'transferred'::text, 'shipped'::text, 'completed'::text, 'cancelled'::text, 'refunded'::text]))),
    CONSTRAINT orders_user_group_check CHECK ((user_group = ANY (ARRAY['public'::text, 'retailer'::text, 'internal'::text]))),
    CONSTRAINT orders_vat_breakdown_check CHECK ((jsonb_typeof(vat_breakdown) = 'array'::text)),
    CONSTRAINT orders_vat_cents_check CHECK ((vat_cents >= 0))
);


--
-- Name: orders_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.orders ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME ordering.orders_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: outbox_messages; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.outbox_messages (
    id bigint NOT NULL,
    kind text NOT NULL,
    dedupe_key text NOT NULL,
    message_id text,
    payload jsonb NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    locked_until timestamp with time zone,
    sent_at timestamp with time zone,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    dead_at timestamp with time zone,
    CONSTRAINT outbox_messages_check CHECK (((sent_at IS NULL) OR (dead_at IS NULL))),
    CONSTRAINT outbox_messages_kind_check CHECK ((kind ~ '^[a-z][a-z0-9-]{0,62}$'::text))
);


--
-- Name: outbox_messages_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.outbox_messages ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.outbox_messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: payment_deliveries; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.payment_deliveries (
    id bigint NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    content_type text,
    transaction_id integer,
    claimed_status text,
    provider_status text,
    order_id integer,
    outcome text NOT NULL,
    repeats integer DEFAULT 0 NOT NULL
);


--
-- Name: payment_deliveries_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.payment_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.payment_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: payment_receipts; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.payment_receipts (
    transaction_id integer NOT NULL,
    order_id integer NOT NULL,
    amount_cents bigint NOT NULL,
    currency text NOT NULL,
    mode text,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT payment_receipts_amount_cents_check CHECK ((amount_cents >= 0))
);


--
-- Name: payment_refunds; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.payment_refunds (
    transaction_id integer NOT NULL,
    order_id integer NOT NULL,
    original_transaction_id integer NOT NULL,
    amount_cents bigint NOT NULL,
    currency text NOT NULL,
    status text NOT NULL,
    recorded_at timestamp with time zone DEFAULT now() NOT NULL,
    reported_refunded_cents bigint,
    CONSTRAINT payment_refunds_amount_cents_check CHECK ((amount_cents > 0))
);


--
-- Name: refresh_tokens; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.refresh_tokens (
    id bigint NOT NULL,
    token_hash text NOT NULL,
    family_id uuid NOT NULL,
    user_id integer NOT NULL,
    scope text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    revoked_at timestamp with time zone
);


--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.refresh_tokens ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: retailers; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.retailers (
    erp_system text NOT NULL,
    erp_id text NOT NULL,
    erp_version text NOT NULL,
    customer_number text NOT NULL,
    company text NOT NULL,
    is_public boolean DEFAULT false NOT NULL,
    email text,
    phone text,
    website text,
    street text,
    street2 text,
    zip_code text,
    city text,
    state text,
    country_code character(2),
    served_countries text[] DEFAULT '{}'::text[] NOT NULL,
    imported_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT retailers_erp_system_check CHECK ((erp_system = ANY (ARRAY['weclapp'::text, 'weclappSandbox'::text])))
);


--
-- Name: service_clients; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.service_clients (
    id integer NOT NULL,
    name text NOT NULL,
    client_id text NOT NULL,
    secret_hash text NOT NULL,
    identifier_hash text,
    roles text[] DEFAULT '{}'::text[] NOT NULL,
    user_group text DEFAULT 'public'::text NOT NULL,
    is_active boolean DEFAULT true NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT service_clients_roles_check CHECK ((roles <@ ARRAY['admin'::text, 'support'::text, 'retailer'::text, 'customer'::text])),
    CONSTRAINT service_clients_user_group_check CHECK ((user_group = ANY (ARRAY['public'::text, 'retailer'::text, 'internal'::text])))
);


--
-- Name: service_clients_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.service_clients ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.service_clients_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: users; Type: TABLE; Schema: ordering; Owner: -
--

CREATE TABLE ordering.users (
    id integer NOT NULL,
    user_name text NOT NULL,
    email text NOT NULL,
    email_verified boolean DEFAULT false NOT NULL,
    first_name text,
    last_name text,
    culture text DEFAULT 'en'::text NOT NULL,
    roles text[] DEFAULT '{customer}'::text[] NOT NULL,
    user_group text DEFAULT 'public'::text NOT NULL,
    erp_retailer_entity_id text,
    is_active boolean DEFAULT true NOT NULL,
    password_hash text,
    last_login_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    token_version integer DEFAULT 0 NOT NULL,
    CONSTRAINT users_check CHECK (((NOT ('retailer'::text = ANY (roles))) OR ((user_group = 'retailer'::text) AND (erp_retailer_entity_id IS NOT NULL)))),
    CONSTRAINT users_roles_check CHECK (((roles <@ ARRAY['admin'::text, 'support'::text, 'retailer'::text, 'customer'::text]) AND (cardinality(roles) >= 1))),
    CONSTRAINT users_user_group_check CHECK ((user_group = ANY (ARRAY['public'::text, 'retailer'::text, 'internal'::text])))
);


--
-- Name: users_id_seq; Type: SEQUENCE; Schema: ordering; Owner: -
--

ALTER TABLE ordering.users ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME ordering.users_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: article_bom_items article_bom_items_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.article_bom_items
    ADD CONSTRAINT article_bom_items_pkey PRIMARY KEY (main_article_number, "position");


--
-- Name: articles articles_article_number_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.articles
    ADD CONSTRAINT articles_article_number_key UNIQUE (article_number);


--
-- Name: articles articles_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.articles
    ADD CONSTRAINT articles_pkey PRIMARY KEY (id);


--
-- Name: battery_records battery_records_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.battery_records
    ADD CONSTRAINT battery_records_pkey PRIMARY KEY (card_number);


--
-- Name: card_numbers card_numbers_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.card_numbers
    ADD CONSTRAINT card_numbers_pkey PRIMARY KEY (service_id);


--
-- Name: discount_campaigns discount_campaigns_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_campaigns
    ADD CONSTRAINT discount_campaigns_pkey PRIMARY KEY (id);


--
-- Name: discount_codes discount_codes_code_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_codes
    ADD CONSTRAINT discount_codes_code_key UNIQUE (code);


--
-- Name: discount_codes discount_codes_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_codes
    ADD CONSTRAINT discount_codes_pkey PRIMARY KEY (id);


--
-- Name: discount_redemptions discount_redemptions_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_redemptions
    ADD CONSTRAINT discount_redemptions_pkey PRIMARY KEY (code_id, order_id);


--
-- Name: email_verifications email_verifications_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.email_verifications
    ADD CONSTRAINT email_verifications_pkey PRIMARY KEY (id);


--
-- Name: email_verifications email_verifications_token_hash_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.email_verifications
    ADD CONSTRAINT email_verifications_token_hash_key UNIQUE (token_hash);


--
-- Name: erp_api_tokens erp_api_tokens_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.erp_api_tokens
    ADD CONSTRAINT erp_api_tokens_pkey PRIMARY KEY (erp_system);


--
-- Name: erp_webhook_jobs erp_webhook_jobs_erp_system_entity_name_entity_id_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.erp_webhook_jobs
    ADD CONSTRAINT erp_webhook_jobs_erp_system_entity_name_entity_id_key UNIQUE (erp_system, entity_name, entity_id);


--
-- Name: erp_webhook_jobs erp_webhook_jobs_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.erp_webhook_jobs
    ADD CONSTRAINT erp_webhook_jobs_pkey PRIMARY KEY (id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (scope, key);


--
-- Name: kysely_migration_lock kysely_migration_lock_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.kysely_migration_lock
    ADD CONSTRAINT kysely_migration_lock_pkey PRIMARY KEY (id);


--
-- Name: kysely_migration kysely_migration_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.kysely_migration
    ADD CONSTRAINT kysely_migration_pkey PRIMARY KEY (name);


--
-- Name: licenses licenses_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.licenses
    ADD CONSTRAINT licenses_pkey PRIMARY KEY (id);


--
-- Name: licenses licenses_secret_hash_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.licenses
    ADD CONSTRAINT licenses_secret_hash_key UNIQUE (secret_hash);


--
-- Name: licenses licenses_seq_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.licenses
    ADD CONSTRAINT licenses_seq_key UNIQUE (seq);


--
-- Name: localized_countries localized_countries_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.localized_countries
    ADD CONSTRAINT localized_countries_pkey PRIMARY KEY (culture, country_code);


--
-- Name: localized_product_options localized_product_options_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.localized_product_options
    ADD CONSTRAINT localized_product_options_pkey PRIMARY KEY (culture, attribute_key);


--
-- Name: maintenance_mode maintenance_mode_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.maintenance_mode
    ADD CONSTRAINT maintenance_mode_pkey PRIMARY KEY (singleton);


--
-- Name: order_items order_items_order_id_position_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_items
    ADD CONSTRAINT order_items_order_id_position_key UNIQUE (order_id, "position");


--
-- Name: order_items order_items_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_items
    ADD CONSTRAINT order_items_pkey PRIMARY KEY (id);


--
-- Name: order_state_changes order_state_changes_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_state_changes
    ADD CONSTRAINT order_state_changes_pkey PRIMARY KEY (id);


--
-- Name: orders orders_order_number_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.orders
    ADD CONSTRAINT orders_order_number_key UNIQUE (order_number);


--
-- Name: orders orders_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);


--
-- Name: outbox_messages outbox_messages_kind_dedupe_key_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.outbox_messages
    ADD CONSTRAINT outbox_messages_kind_dedupe_key_key UNIQUE (kind, dedupe_key);


--
-- Name: outbox_messages outbox_messages_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.outbox_messages
    ADD CONSTRAINT outbox_messages_pkey PRIMARY KEY (id);


--
-- Name: payment_deliveries payment_deliveries_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_deliveries
    ADD CONSTRAINT payment_deliveries_pkey PRIMARY KEY (id);


--
-- Name: payment_receipts payment_receipts_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_receipts
    ADD CONSTRAINT payment_receipts_pkey PRIMARY KEY (transaction_id);


--
-- Name: payment_refunds payment_refunds_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_refunds
    ADD CONSTRAINT payment_refunds_pkey PRIMARY KEY (transaction_id);


--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);


--
-- Name: refresh_tokens refresh_tokens_token_hash_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash);


--
-- Name: retailers retailers_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.retailers
    ADD CONSTRAINT retailers_pkey PRIMARY KEY (erp_system, erp_id);


--
-- Name: service_clients service_clients_client_id_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.service_clients
    ADD CONSTRAINT service_clients_client_id_key UNIQUE (client_id);


--
-- Name: service_clients service_clients_identifier_hash_key; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.service_clients
    ADD CONSTRAINT service_clients_identifier_hash_key UNIQUE (identifier_hash);


--
-- Name: service_clients service_clients_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.service_clients
    ADD CONSTRAINT service_clients_pkey PRIMARY KEY (id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: article_bom_items_valid_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX article_bom_items_valid_idx ON ordering.article_bom_items USING gin (valid_article_numbers);


--
-- Name: articles_erp_id_key; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX articles_erp_id_key ON ordering.articles USING btree (erp_id) WHERE (erp_id IS NOT NULL);


--
-- Name: articles_shop_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX articles_shop_idx ON ordering.articles USING btree (sort_order, article_number) WHERE is_shop_article;


--
-- Name: card_numbers_order_ref_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX card_numbers_order_ref_idx ON ordering.card_numbers USING btree (order_ref) WHERE (order_ref IS NOT NULL);


--
-- Name: discount_codes_campaign_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX discount_codes_campaign_idx ON ordering.discount_codes USING btree (campaign_id);


--
-- Name: discount_redemptions_order_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX discount_redemptions_order_idx ON ordering.discount_redemptions USING btree (order_id);


--
-- Name: email_verifications_user_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX email_verifications_user_idx ON ordering.email_verifications USING btree (user_id) WHERE (used_at IS NULL);


--
-- Name: erp_webhook_jobs_due_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX erp_webhook_jobs_due_idx ON ordering.erp_webhook_jobs USING btree (next_attempt_at);


--
-- Name: idempotency_keys_expires_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX idempotency_keys_expires_idx ON ordering.idempotency_keys USING btree (expires_at);


--
-- Name: licenses_email_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX licenses_email_idx ON ordering.licenses USING btree (lower(email), product);


--
-- Name: licenses_free_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX licenses_free_idx ON ordering.licenses USING btree (product, seq) WHERE (email IS NULL);


--
-- Name: order_items_card_number_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX order_items_card_number_idx ON ordering.order_items USING btree (card_number) WHERE (card_number IS NOT NULL);


--
-- Name: order_state_changes_order_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX order_state_changes_order_idx ON ordering.order_state_changes USING btree (order_id, id);


--
-- Name: orders_created_at_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX orders_created_at_idx ON ordering.orders USING btree (created_at, id);


--
-- Name: orders_paylink_id_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX orders_paylink_id_idx ON ordering.orders USING btree (paylink_id) WHERE (paylink_id IS NOT NULL);


--
-- Name: orders_pending_payment_created_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX orders_pending_payment_created_idx ON ordering.orders USING btree (created_at) WHERE (state = 'pending_payment'::text);


--
-- Name: orders_state_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX orders_state_idx ON ordering.orders USING btree (state, id);


--
-- Name: outbox_messages_due_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX outbox_messages_due_idx ON ordering.outbox_messages USING btree (kind, next_attempt_at, id) WHERE ((sent_at IS NULL) AND (dead_at IS NULL));


--
-- Name: payment_deliveries_order_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX payment_deliveries_order_idx ON ordering.payment_deliveries USING btree (order_id, id);


--
-- Name: payment_deliveries_pending_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX payment_deliveries_pending_idx ON ordering.payment_deliveries USING btree (transaction_id) WHERE (outcome = 'queued'::text);


--
-- Name: payment_deliveries_received_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX payment_deliveries_received_idx ON ordering.payment_deliveries USING btree (received_at);


--
-- Name: payment_deliveries_transaction_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX payment_deliveries_transaction_idx ON ordering.payment_deliveries USING btree (transaction_id, received_at);


--
-- Name: payment_receipts_order_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX payment_receipts_order_idx ON ordering.payment_receipts USING btree (order_id);


--
-- Name: payment_refunds_order_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX payment_refunds_order_idx ON ordering.payment_refunds USING btree (order_id);


--
-- Name: refresh_tokens_family_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX refresh_tokens_family_idx ON ordering.refresh_tokens USING btree (family_id);


--
-- Name: refresh_tokens_user_idx; Type: INDEX; Schema: ordering; Owner: -
--

CREATE INDEX refresh_tokens_user_idx ON ordering.refresh_tokens USING btree (user_id) WHERE (revoked_at IS NULL);


--
-- Name: service_clients_name_key; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX service_clients_name_key ON ordering.service_clients USING btree (lower(name));


--
-- Name: users_email_key; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX users_email_key ON ordering.users USING btree (lower(email));


--
-- Name: users_user_name_key; Type: INDEX; Schema: ordering; Owner: -
--

CREATE UNIQUE INDEX users_user_name_key ON ordering.users USING btree (lower(user_name));


--
-- Name: article_bom_items article_bom_items_main_article_number_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.article_bom_items
    ADD CONSTRAINT article_bom_items_main_article_number_fkey FOREIGN KEY (main_article_number) REFERENCES ordering.articles(article_number) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: discount_codes discount_codes_campaign_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_codes
    ADD CONSTRAINT discount_codes_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES ordering.discount_campaigns(id) ON DELETE CASCADE;


--
-- Name: discount_redemptions discount_redemptions_code_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_redemptions
    ADD CONSTRAINT discount_redemptions_code_id_fkey FOREIGN KEY (code_id) REFERENCES ordering.discount_codes(id);


--
-- Name: discount_redemptions discount_redemptions_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.discount_redemptions
    ADD CONSTRAINT discount_redemptions_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: email_verifications email_verifications_user_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.email_verifications
    ADD CONSTRAINT email_verifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES ordering.users(id) ON DELETE CASCADE;


--
-- Name: idempotency_keys idempotency_keys_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.idempotency_keys
    ADD CONSTRAINT idempotency_keys_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: order_items order_items_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_items
    ADD CONSTRAINT order_items_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: order_items order_items_parent_item_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_items
    ADD CONSTRAINT order_items_parent_item_id_fkey FOREIGN KEY (parent_item_id) REFERENCES ordering.order_items(id) ON DELETE CASCADE;


--
-- Name: order_state_changes order_state_changes_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.order_state_changes
    ADD CONSTRAINT order_state_changes_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: payment_deliveries payment_deliveries_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_deliveries
    ADD CONSTRAINT payment_deliveries_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE SET NULL;


--
-- Name: payment_receipts payment_receipts_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_receipts
    ADD CONSTRAINT payment_receipts_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: payment_refunds payment_refunds_order_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.payment_refunds
    ADD CONSTRAINT payment_refunds_order_id_fkey FOREIGN KEY (order_id) REFERENCES ordering.orders(id) ON DELETE CASCADE;


--
-- Name: refresh_tokens refresh_tokens_user_id_fkey; Type: FK CONSTRAINT; Schema: ordering; Owner: -
--

ALTER TABLE ONLY ordering.refresh_tokens
    ADD CONSTRAINT refresh_tokens_user_id_fkey FOREIGN KEY (user_id) REFERENCES ordering.users(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict
