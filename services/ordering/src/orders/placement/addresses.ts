/**
 * Address rules of orders (schemas `AddressDTO`, `OrderRequest`): first name or organisation,
 * a known country (ISO 3166-1 alpha-2 ↔ internal country id), an E.164 phone number where the courier
 * needs one, and the billing address present exactly when it differs from the shipping address.
 */
import { isValidPhoneNumber } from 'libphonenumber-js';
import { addFieldError, type FieldErrors } from '@sports-timing/shared';
import { countryIdForCode } from '../../countries/countries.service';
import { courierFor, type Courier } from '../couriers';
import type { AddressPaths, OrderAddress, OrderInput } from '../order.types';

/** The addresses of an order, checked: internal country ids and the courier of the shipping country. */
export interface CheckedAddresses {
  shippingCountryId: number;
  billingCountryId: number | null;
  courier: Courier;
}

function checkAddress(a: OrderAddress, paths: AddressPaths, add: (field: string, msg: string) => void, courier: Courier | null): number | null {
  if (!a.firstName?.trim() && !a.organisation?.trim()) add(paths.firstName, 'A first name or an organisation is required.');
  const countryId = countryIdForCode(a.countryCode);
  if (countryId === null) add(paths.countryCode, `${a.countryCode} is not an ISO 3166-1 alpha-2 country code.`);
  if (a.phoneNumber) {
    if (!isValidPhoneNumber(a.phoneNumber)) add(paths.phoneNumber, `${a.phoneNumber} is not a valid phone number in E.164 format.`);
  } else if (courier?.needsPhone) {
    add(paths.phoneNumber, `A phone number (E.164) is required for shipments to ${a.countryCode} (${courier.name}).`);
  }
  return countryId;
}

/**
 * Checks the addresses of an order; adds every violation to `errors` (field names from `input.paths`).
 * Returns the internal country ids and courier, meaningful only when no error was added.
 */
export function checkAddresses(input: OrderInput, errors: FieldErrors): CheckedAddresses {
  const add = (field: string, msg: string) => addFieldError(errors, field, msg);
  const courier = courierFor(input.shippingAddress.countryCode);
  const shippingCountryId = checkAddress(input.shippingAddress, input.paths.shippingAddress, add, courier) ?? 0;
  let billingCountryId: number | null = null;
  if (input.billingAddressIsSameAsShippingAddress) {
    if (input.billingAddress) add(input.paths.billingAddressField, 'must be null or absent when billingAddressIsSameAsShippingAddress is true.');
  } else if (!input.billingAddress) {
    add(input.paths.billingAddressField, 'is required when billingAddressIsSameAsShippingAddress is false.');
  } else {
    billingCountryId = checkAddress(input.billingAddress, input.paths.billingAddress, add, null);
  }
  return { shippingCountryId, billingCountryId, courier };
}
