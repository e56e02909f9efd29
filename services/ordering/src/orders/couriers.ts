/**
 * Shipping by destination country (ordering spec `Courier`, `createShopOrder` "Shipping"): which courier
 * carries a parcel, what it costs (net cents, EUR) and whether the courier needs the recipient's phone
 * number. UPS, FedEx and DHL Express deliver with a phone call or SMS on customs and delivery problems,
 * so the shipping address needs an E.164 phone number for them (schema `AddressDTO.phoneNumber`).
 */
import type { components } from '../generated/openapi';
import { EU_COUNTRIES } from '@sports-timing/shared';

/** Couriers (spec `Courier`); {@link COURIERS} has one entry for each. */
type CourierId = components['schemas']['Courier'];

/** A courier and its terms. */
export interface Courier {
  id: CourierId;
  /** Display name used in the confirmation e-mail. */
  name: string;
  /** Net shipping costs per order, cents of EUR. */
  shippingNetCents: number;
  /** Whether the shipping address must carry a phone number. */
  needsPhone: boolean;
}

/** The couriers and their terms. */
const COURIERS: Readonly<Record<CourierId, Courier>> = {
  dhlParcel: { id: 'dhlParcel', name: 'DHL Paket', shippingNetCents: 590, needsPhone: false },
  dhlParcelInternational: { id: 'dhlParcelInternational', name: 'DHL Paket International', shippingNetCents: 1290, needsPhone: false },
  ups: { id: 'ups', name: 'UPS Standard', shippingNetCents: 2490, needsPhone: true },
  fedex: { id: 'fedex', name: 'FedEx International Priority', shippingNetCents: 3490, needsPhone: true },
  dhlExpress: { id: 'dhlExpress', name: 'DHL Express Worldwide', shippingNetCents: 4490, needsPhone: true },
};

/** Country of dispatch (domestic rate). */
const HOME_COUNTRY = 'DE';

/** European countries outside the EU, served by UPS. */
const UPS_COUNTRIES: ReadonlySet<string> = new Set([
  'CH',
  'LI',
  'NO',
  'IS',
  'GB',
  'AD',
  'MC',
  'SM',
  'VA',
  'AL',
  'BA',
  'ME',
  'MK',
  'RS',
  'MD',
  'UA',
  'TR',
  'GI',
  'FO',
  'GL',
  'JE',
  'GG',
  'IM',
]);

/** North American countries served by FedEx. */
const FEDEX_COUNTRIES: ReadonlySet<string> = new Set(['US', 'CA', 'MX', 'PR']);

/** Whether `id` is a courier of the spec's `Courier` enum. */
export function isCourierId(id: string): id is CourierId {
  return Object.hasOwn(COURIERS, id);
}

/** The courier for a destination (ISO alpha-2, upper case); everything not listed goes by DHL Express. */
export function courierFor(countryCode: string): Courier {
  if (countryCode === HOME_COUNTRY) return COURIERS.dhlParcel;
  if (EU_COUNTRIES.has(countryCode)) return COURIERS.dhlParcelInternational;
  if (UPS_COUNTRIES.has(countryCode)) return COURIERS.ups;
  if (FEDEX_COUNTRIES.has(countryCode)) return COURIERS.fedex;
  return COURIERS.dhlExpress;
}
