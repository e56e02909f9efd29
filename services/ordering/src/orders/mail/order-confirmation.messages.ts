/**
 * Texts of the order confirmation e-mail in the supported languages (at least en, de, fr;
 * fallback en). Placeholders are filled by the template; values are plain text (the HTML template
 * escapes them).
 */

/** Languages the confirmation e-mail is written in. */
export const CONFIRMATION_LANGUAGES = ['en', 'de', 'fr'] as const;
export type ConfirmationLanguage = (typeof CONFIRMATION_LANGUAGES)[number];

/** All texts of one language. */
export interface ConfirmationMessages {
  subject(orderNumber: string): string;
  greeting(name: string): string;
  intro: string;
  orderNumber: string;
  orderDate: string;
  items: string;
  cardNumber: string;
  includedInSet: string;
  itemsNet: string;
  /** Sum of the item lines including VAT (consumers). */
  itemsGross: string;
  /** The VAT contained in a gross total (consumers), e.g. "incl. VAT 19 %". */
  inclVat(rate: string): string;
  /** The note under the totals: consumers see prices including VAT, retailers net prices. */
  pricesGross: string;
  pricesNet: string;
  paylinkSubject(orderNumber: string): string;
  /** Payment-link e-mail: the request to pay, with the order number and the gross amount. */
  paylinkIntro(orderNumber: string, amount: string): string;
  paylinkButton: string;
  paylinkAfter: string;
  discount(codes: string): string;
  shipping(courier: string): string;
  netTotal: string;
  vat(rate: string): string;
  grossTotal: string;
  shippingAddress: string;
  billingAddress: string;
  billingSameAsShipping: string;
  phone: string;
  yourReference: string;
  paymentByPaylink: string;
  paymentByInvoice: string;
  closing: string;
  signature: string;
}

/** The texts by language. */
export const CONFIRMATION_MESSAGES: Readonly<Record<ConfirmationLanguage, ConfirmationMessages>> = {
  en: {
    subject: (n) => `Your order ${n}`,
    greeting: (name) => `Hello ${name},`,
    intro: 'thank you for your order. We have received it as follows.',
    orderNumber: 'Order number',
    orderDate: 'Order date',
    items: 'Items',
    cardNumber: 'Card number',
    includedInSet: 'included',
    itemsNet: 'Items (net)',
    itemsGross: 'Items',
    inclVat: (rate) => `incl. VAT ${rate}`,
    pricesGross: 'All prices include VAT.',
    pricesNet: 'Prices are net; VAT is added as shown.',
    paylinkSubject: (n) => `Payment link for your order ${n}`,
    paylinkIntro: (n, amount) => `please pay your order ${n} (${amount}) through this link:`,
    paylinkButton: 'Pay now',
    paylinkAfter: 'We ship as soon as the payment has arrived.',
    discount: (codes) => `Discount (${codes})`,
    shipping: (courier) => `Shipping (${courier})`,
    netTotal: 'Total (net)',
    vat: (rate) => `VAT ${rate}`,
    grossTotal: 'Total',
    shippingAddress: 'Shipping address',
    billingAddress: 'Billing address',
    billingSameAsShipping: 'Same as the shipping address',
    phone: 'Phone',
    yourReference: 'Your reference',
    paymentByPaylink: 'You will receive a link to pay for the order shortly. We ship as soon as the payment has arrived.',
    paymentByInvoice: 'The order will be invoiced to you.',
    closing: 'If you have questions about your order, just reply to this e-mail.',
    signature: 'Your SPORTident shop team',
  },
  de: {
    subject: (n) => `Ihre Bestellung ${n}`,
    greeting: (name) => `Guten Tag ${name},`,
    intro: 'vielen Dank für Ihre Bestellung. Wir haben sie wie folgt erhalten.',
    orderNumber: 'Bestellnummer',
    orderDate: 'Bestelldatum',
    items: 'Artikel',
    cardNumber: 'Kartennummer',
    includedInSet: 'inklusive',
    itemsNet: 'Artikel (netto)',
    itemsGross: 'Artikel',
    inclVat: (rate) => `inkl. MwSt. ${rate}`,
    pricesGross: 'Alle Preise inklusive MwSt.',
    pricesNet: 'Preise netto, zuzüglich der ausgewiesenen MwSt.',
    paylinkSubject: (n) => `Zahlungslink für Ihre Bestellung ${n}`,
    paylinkIntro: (n, amount) => `bitte bezahlen Sie Ihre Bestellung ${n} (${amount}) über diesen Link:`,
    paylinkButton: 'Jetzt bezahlen',
    paylinkAfter: 'Wir versenden, sobald die Zahlung eingegangen ist.',
    discount: (codes) => `Rabatt (${codes})`,
    shipping: (courier) => `Versand (${courier})`,
    netTotal: 'Summe (netto)',
    vat: (rate) => `MwSt. ${rate}`,
    grossTotal: 'Gesamtbetrag',
    shippingAddress: 'Lieferadresse',
    billingAddress: 'Rechnungsadresse',
    billingSameAsShipping: 'Wie Lieferadresse',
    phone: 'Telefon',
    yourReference: 'Ihre Referenz',
    paymentByPaylink: 'Sie erhalten in Kürze einen Link zur Bezahlung. Wir versenden, sobald die Zahlung eingegangen ist.',
    paymentByInvoice: 'Die Bestellung wird Ihnen in Rechnung gestellt.',
    closing: 'Bei Fragen zu Ihrer Bestellung antworten Sie einfach auf diese E-Mail.',
    signature: 'Ihr SPORTident Shop-Team',
  },
  fr: {
    subject: (n) => `Votre commande ${n}`,
    greeting: (name) => `Bonjour ${name},`,
    intro: 'merci pour votre commande. Nous l’avons reçue comme suit.',
    orderNumber: 'Numéro de commande',
    orderDate: 'Date de commande',
    items: 'Articles',
    cardNumber: 'Numéro de carte',
    includedInSet: 'inclus',
    itemsNet: 'Articles (HT)',
    itemsGross: 'Articles',
    inclVat: (rate) => `dont TVA ${rate}`,
    pricesGross: 'Tous les prix sont TTC.',
    pricesNet: 'Prix HT, TVA en sus comme indiqué.',
    paylinkSubject: (n) => `Lien de paiement pour votre commande ${n}`,
    paylinkIntro: (n, amount) => `veuillez payer votre commande ${n} (${amount}) par ce lien :`,
    paylinkButton: 'Payer maintenant',
    paylinkAfter: 'Nous expédions dès réception du paiement.',
    discount: (codes) => `Remise (${codes})`,
    shipping: (courier) => `Livraison (${courier})`,
    netTotal: 'Total (HT)',
    vat: (rate) => `TVA ${rate}`,
    grossTotal: 'Total TTC',
    shippingAddress: 'Adresse de livraison',
    billingAddress: 'Adresse de facturation',
    billingSameAsShipping: 'Identique à l’adresse de livraison',
    phone: 'Téléphone',
    yourReference: 'Votre référence',
    paymentByPaylink: 'Vous recevrez sous peu un lien pour payer la commande. Nous expédions dès réception du paiement.',
    paymentByInvoice: 'La commande vous sera facturée.',
    closing: 'Pour toute question sur votre commande, répondez simplement à cet e-mail.',
    signature: 'L’équipe de la boutique SPORTident',
  },
};
