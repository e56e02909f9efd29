/**
 * Card orders (`createOrder`, `OrderRequest`): the rules that turn a card order request into
 * the input of the one order pipeline (`orders.service.ts`) — one item per card, each with its requested card
 * number or a random free number to be claimed, and a bound on the cards per order.
 */
import { addFieldError, specFilled, validationError } from '@sports-timing/shared';
import type { components } from '../../generated/openapi';
import { CARD_NUMBER_KEY } from './cart';
import type { AddressPaths, OrderAddress, OrderInput, OrderItemInput } from '../order.types';

type Schemas = components['schemas'];

/** Spec `OrderRequest`: the body of `createOrder`. */
export type CardOrderRequest = Schemas['OrderRequest'];

/** Most cards one card order may hold (each card is an order item with its own number). */
const MAX_CARDS_PER_CARD_ORDER = 1000;

function cardOrderAddress(a: Schemas['Address'], phoneNumber: string | null): OrderAddress {
  return {
    firstName: a.firstName,
    lastName: a.lastName,
    organisation: a.club ?? null,
    address1: a.address1,
    address2: a.address2 ?? null,
    zip: a.zip ?? null,
    city: a.city,
    state: a.state ?? null,
    countryCode: a.country.toUpperCase(),
    phoneNumber,
  };
}

const cardAddressPaths = (prefix: string, phone: string): AddressPaths => ({
  firstName: `${prefix}.firstName`,
  organisation: `${prefix}.club`,
  countryCode: `${prefix}.country`,
  phoneNumber: phone,
});

/**
 * A card order request (`OrderRequest` of `createOrder`) as pipeline input: each line becomes `quantity` items of
 * quantity 1 with the line's configuration plus its requested card number, or a random free number to
 * be claimed. ApiError 400 when `cardNumbers` does not hold `quantity` numbers, the configuration names
 * a card number itself, or the order holds more than {@link MAX_CARDS_PER_CARD_ORDER} cards.
 */
export function cardOrderInput(body: CardOrderRequest): OrderInput {
  const errors: Record<string, string[]> = {};
  const add = (f: string, m: string) => addFieldError(errors, f, m);
  const items: OrderItemInput[] = [];
  body.items.forEach((line, i) => {
    const path = `items[${i}]`;
    const configuration = { ...(line.configuration ?? {}) };
    if (configuration[CARD_NUMBER_KEY] !== undefined) add(`${path}.configuration.${CARD_NUMBER_KEY}`, 'Give card numbers in cardNumbers.');
    delete configuration[CARD_NUMBER_KEY];
    if (line.cardNumbers && line.cardNumbers.length !== line.quantity)
      add(`${path}.cardNumbers`, `must hold exactly ${line.quantity} card numbers (the quantity).`);
    for (let k = 0; k < line.quantity; k++) {
      const n = line.cardNumbers?.[k];
      items.push({
        articleNumber: line.productId,
        quantity: 1,
        configuration: n === undefined ? { ...configuration } : { ...configuration, [CARD_NUMBER_KEY]: String(n) },
        subitems: [],
        articleBomItemOid: 0,
        lineNo: i,
        paths: { item: path, articleNumber: `${path}.productId`, cardNumber: `${path}.cardNumbers` },
        assignRandomCardNumber: n === undefined,
      });
    }
  });
  if (items.length > MAX_CARDS_PER_CARD_ORDER) add('items', `A card order holds at most ${MAX_CARDS_PER_CARD_ORDER} cards.`);
  if (Object.keys(errors).length > 0) throw validationError(errors);
  const phone = body.phoneNumber ?? null;
  return {
    source: 'cardOrder',
    contact: { ...body.contact, emailOptIn: specFilled(body.contact.emailOptIn, 'emailOptIn'), culture: specFilled(body.contact.culture, 'culture') },
    shippingAddress: cardOrderAddress(body.shippingAddress, phone),
    billingAddress: body.billingAddress ? cardOrderAddress(body.billingAddress, null) : null,
    billingAddressIsSameAsShippingAddress: body.billingAddressIsSameAsShippingAddress,
    items,
    discountCodes: body.discountCodes ?? [],
    retailerCustomerOrderReference: null,
    notes: body.notes ?? null,
    paths: {
      shippingAddress: cardAddressPaths('shippingAddress', 'phoneNumber'),
      billingAddress: cardAddressPaths('billingAddress', 'billingAddress'),
      billingAddressField: 'billingAddress',
      discountCodes: 'discountCodes',
      items: 'items',
    },
  };
}
