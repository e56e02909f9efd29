/**
 * The order confirmation e-mail (`createShopOrder`; docs/mails.md): plain text and HTML,
 * localized by the contact's culture (en, de, fr; `de-CH` → de; anything else → en), amounts formatted
 * with `Intl.NumberFormat` for the contact's culture. User-supplied text is escaped in the HTML part.
 */
import countries from 'i18n-iso-countries';
import { asSingleLine } from '@sports-timing/shared';
import { BUILT_IN_LABELS } from '../../catalog/attribute-labels';
import { canonicalCulture, resolveCulture } from '../../culture/culture';
// Registers the localized country names this template looks up.
import '../../countries/countries.service';
import type { MailPayload } from '../../mail/mailer';
import { percentOf } from '../../money/money';
import type { OrderAddress, StoredOrder, StoredOrderItem } from '../order.types';
import { CONFIRMATION_LANGUAGES, CONFIRMATION_MESSAGES, type ConfirmationLanguage, type ConfirmationMessages } from './order-confirmation.messages';

/** What the template needs besides the order: the courier's display name. */
export interface ConfirmationContext {
  courierName: string;
}

/** The language of the e-mail for a contact culture (BCP 47), with English as the fallback. */
function confirmationLanguage(culture: string): ConfirmationLanguage {
  const lang = resolveCulture([canonicalCulture(culture)], CONFIRMATION_LANGUAGES);
  return (CONFIRMATION_LANGUAGES as readonly string[]).includes(lang) ? (lang as ConfirmationLanguage) : 'en';
}

/** A locale usable by `Intl` for the culture: the culture itself when Intl knows it, else the e-mail language. */
function intlLocale(culture: string, fallback: string): string {
  try {
    const [supported] = Intl.NumberFormat.supportedLocalesOf([canonicalCulture(culture)]);
    return supported ?? fallback;
  } catch {
    return fallback;
  }
}

interface Formatters {
  money: Intl.NumberFormat;
  percent: Intl.NumberFormat;
  date: Intl.DateTimeFormat;
}

/** Most cached formatter sets (culture × currency); cultures come from requests, so the cache is bounded. */
const FORMATTERS_MAX = 500;
const formattersCache = new Map<string, Formatters>();
const moneyCache = new Map<string, Intl.NumberFormat>();

/**
 * The currency formatter of an `Intl` locale and an ISO 4217 currency, made once (building one costs far
 * more than using it; bounded like the formatter sets). Throws RangeError for an unknown currency.
 */
function moneyFormat(locale: string, currency: string): Intl.NumberFormat {
  const key = `${locale}\u0000${currency}`;
  let f = moneyCache.get(key);
  if (!f) {
    f = new Intl.NumberFormat(locale, { style: 'currency', currency });
    if (moneyCache.size >= FORMATTERS_MAX) moneyCache.clear();
    moneyCache.set(key, f);
  }
  return f;
}

/**
 * The formatters of a culture and currency. Building `Intl` formatters costs far more than using them and
 * the e-mail is rendered inside the order transaction, so they are made once per culture and currency.
 */
function formattersFor(culture: string, lang: string, currency: string): Formatters {
  const key = `${culture}\u0000${lang}\u0000${currency}`;
  let f = formattersCache.get(key);
  if (!f) {
    const locale = intlLocale(culture, lang);
    f = {
      money: moneyFormat(locale, currency),
      percent: new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 }),
      date: new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }),
    };
    if (formattersCache.size >= FORMATTERS_MAX) formattersCache.clear();
    formattersCache.set(key, f);
  }
  return f;
}

/** Escapes text for HTML element content and attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

interface Row {
  label: string;
  value: string;
  strong?: boolean;
}

interface ItemView {
  text: string;
  details: string[];
  amount: string | null;
  isSub: boolean;
}

function configurationLines(item: StoredOrderItem, lang: ConfirmationLanguage, m: ConfirmationMessages): string[] {
  return Object.entries(item.configuration)
    .filter(([key]) => key !== 'cardNumber')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => {
      const labels = BUILT_IN_LABELS[key];
      const label = labels?.label[lang] ?? labels?.label.en ?? key;
      const valueLabel = labels?.options?.[value]?.[lang] ?? labels?.options?.[value]?.en ?? value;
      return `${label}: ${valueLabel}`;
    })
    .concat(item.cardNumber !== null ? [`${m.cardNumber}: ${item.cardNumber}`] : []);
}

/** Longest customer-supplied name part and address line in a mail, in code points (docs/mails.md). */
const MAX_NAME = 60;
const MAX_LINE = 100;

/** The customer's name as a mail repeats it: one line, each part bounded (docs/mails.md "Customer text"). */
function customerName(firstName: string | null | undefined, lastName: string | null | undefined): string {
  return [firstName, lastName]
    .filter((x): x is string => !!x)
    .map((x) => asSingleLine(x, MAX_NAME))
    .filter(Boolean)
    .join(' ');
}

function addressLines(a: OrderAddress, lang: ConfirmationLanguage, m: ConfirmationMessages): string[] {
  const name = customerName(a.firstName, a.lastName);
  const country = countries.getName(a.countryCode, lang) ?? countries.getName(a.countryCode, 'en') ?? a.countryCode;
  const line = (x: string | null | undefined) => (x ? asSingleLine(x, MAX_LINE) : null);
  return [
    line(a.organisation),
    name || null,
    line(a.address1),
    line(a.address2),
    line([a.zip, a.city].filter(Boolean).join(' ')),
    line(a.state),
    country,
    a.phoneNumber ? `${m.phone}: ${asSingleLine(a.phoneNumber, 40)}` : null,
  ].filter((l): l is string => !!l);
}

/**
 * Renders the confirmation of `order` as an outbox mail payload to the contact's address: subject,
 * `language` (the e-mail language), plain text and HTML listing order number, items with their
 * configuration and card numbers, discount, shipping, VAT per rate, totals and addresses. Consumers (user
 * group `public`) get line amounts, discount and shipping including VAT and the VAT contained in the
 * total; retailers and internal buyers get net amounts with the VAT added (docs/mails.md).
 */
export function renderOrderConfirmation(order: StoredOrder, ctx: ConfirmationContext): MailPayload {
  const lang = confirmationLanguage(order.contact.culture);
  const m = CONFIRMATION_MESSAGES[lang];
  const { money, percent, date: dateFormat } = formattersFor(order.contact.culture, lang, order.currency);
  const amount = (cents: number) => money.format(cents / 100);
  const date = dateFormat.format(order.createdAt);

  // Prices as the shop showed them to this customer: consumers (user group public) saw gross prices,
  // retailers and internal buyers net ones. The gross view adds up exactly: per line, gross before
  // discount minus the discount's gross share is the line's taxable amount plus its VAT (totals.ts).
  const gross = order.userGroup === 'public';
  const shippingRate = order.items.reduce((max, it) => Math.max(max, it.vatRatePercent), 0);
  const lineAmount = (it: StoredOrderItem) => (gross ? it.netAmountCents + percentOf(it.netAmountCents, it.vatRatePercent) : it.netAmountCents);
  const items: ItemView[] = order.items.map((it) => ({
    text: `${it.quantity} × ${it.articleName} (${it.articleNumber})`,
    details: configurationLines(it, lang, m),
    amount: it.parentItemId === null || it.netAmountCents > 0 ? amount(lineAmount(it)) : m.includedInSet,
    isSub: it.parentItemId !== null,
  }));
  const rows: Row[] = [];
  if (gross) {
    const itemsGross = order.items.reduce((sum, it) => sum + lineAmount(it), 0);
    const discountGross = order.items.reduce((sum, it) => sum + lineAmount(it) - (it.netAmountCents - it.discountNetCents + it.vatCents), 0);
    rows.push({ label: m.itemsGross, value: amount(itemsGross) });
    if (discountGross > 0) rows.push({ label: m.discount(order.discountCodes.join(', ')), value: `−${amount(discountGross)}` });
    rows.push({ label: m.shipping(ctx.courierName), value: amount(order.shippingNetCents + percentOf(order.shippingNetCents, shippingRate)) });
    rows.push({ label: m.grossTotal, value: amount(order.grossTotalCents), strong: true });
    for (const v of order.vatBreakdown) rows.push({ label: m.inclVat(percent.format(v.vatRatePercent / 100)), value: amount(v.vatCents) });
  } else {
    rows.push({ label: m.itemsNet, value: amount(order.itemsNetCents) });
    if (order.discountCents > 0) rows.push({ label: m.discount(order.discountCodes.join(', ')), value: `−${amount(order.discountCents)}` });
    rows.push({ label: m.shipping(ctx.courierName), value: amount(order.shippingNetCents) });
    rows.push({ label: m.netTotal, value: amount(order.netTotalCents) });
    for (const v of order.vatBreakdown) rows.push({ label: m.vat(percent.format(v.vatRatePercent / 100)), value: amount(v.vatCents) });
    rows.push({ label: m.grossTotal, value: amount(order.grossTotalCents), strong: true });
  }
  const priceNote = gross ? m.pricesGross : m.pricesNet;

  const shipping = addressLines(order.shippingAddress, lang, m);
  const billing = order.billingAddress ? addressLines(order.billingAddress, lang, m) : [m.billingSameAsShipping];
  const name = customerName(order.contact.firstName, order.contact.lastName);
  const payment = order.paymentMethod === 'invoice' ? m.paymentByInvoice : m.paymentByPaylink;
  const extras: Row[] = [];
  if (order.retailerCustomerOrderReference) extras.push({ label: m.yourReference, value: asSingleLine(order.retailerCustomerOrderReference, MAX_LINE) });
  // `notes` are not echoed (docs/mails.md "Customer text"): the shop reads them in the order, the mail does
  // not carry free text to whatever address the order names.

  const text = [
    m.greeting(name),
    '',
    m.intro,
    '',
    `${m.orderNumber}: ${order.orderNumber}`,
    `${m.orderDate}: ${date}`,
    ...extras.map((e) => `${e.label}: ${e.value}`),
    '',
    `${m.items}:`,
    ...items.flatMap((i) => [
      `${i.isSub ? '    + ' : '  '}${i.text}  ${i.amount ?? ''}`.trimEnd(),
      ...i.details.map((d) => `${i.isSub ? '        ' : '      '}${d}`),
    ]),
    '',
    ...rows.map((r) => `${r.label}: ${r.value}`),
    priceNote,
    '',
    `${m.shippingAddress}:`,
    ...shipping.map((l) => `  ${l}`),
    '',
    `${m.billingAddress}:`,
    ...billing.map((l) => `  ${l}`),
    '',
    payment,
    '',
    m.closing,
    '',
    m.signature,
    '',
  ].join('\n');

  const e = escapeHtml;
  const itemRows = items
    .map(
      (i) =>
        `<tr><td style="padding:4px 8px${i.isSub ? ';padding-left:24px' : ''}">${e(i.text)}${i.details.map((d) => `<br><small>${e(d)}</small>`).join('')}</td><td style="padding:4px 8px;text-align:right;white-space:nowrap">${e(i.amount ?? '')}</td></tr>`,
    )
    .join('');
  const totalRows = rows
    .map(
      (r) =>
        `<tr><td style="padding:2px 8px">${r.strong ? `<strong>${e(r.label)}</strong>` : e(r.label)}</td><td style="padding:2px 8px;text-align:right;white-space:nowrap">${r.strong ? `<strong>${e(r.value)}</strong>` : e(r.value)}</td></tr>`,
    )
    .join('');
  const html = `<!DOCTYPE html>
<html lang="${lang}"><head><meta charset="utf-8"><title>${e(m.subject(order.orderNumber))}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#222">
<p>${e(m.greeting(name))}</p>
<p>${e(m.intro)}</p>
<p>${e(m.orderNumber)}: <strong>${e(order.orderNumber)}</strong><br>${e(m.orderDate)}: ${e(date)}${extras.map((x) => `<br>${e(x.label)}: ${e(x.value)}`).join('')}</p>
<h3>${e(m.items)}</h3>
<table style="border-collapse:collapse">${itemRows}</table>
<table style="border-collapse:collapse;margin-top:12px">${totalRows}</table>
<p><small>${e(priceNote)}</small></p>
<h3>${e(m.shippingAddress)}</h3>
<p>${shipping.map(e).join('<br>')}</p>
<h3>${e(m.billingAddress)}</h3>
<p>${billing.map(e).join('<br>')}</p>
<p>${e(payment)}</p>
<p>${e(m.closing)}</p>
<p>${e(m.signature)}</p>
</body></html>
`;
  return { to: order.contact.email, subject: m.subject(order.orderNumber), text, html, language: lang };
}

/**
 * The e-mail carrying an order's payment link: greeting, the request to pay with the gross total, the link
 * (a button in HTML), closing and signature, in the contact's language; plain text and HTML.
 */
export function renderPaylinkMail(order: StoredOrder, url: string): MailPayload {
  const lang = confirmationLanguage(order.contact.culture);
  const m = CONFIRMATION_MESSAGES[lang];
  const total = formattersFor(order.contact.culture, lang, order.currency).money.format(order.grossTotalCents / 100);
  const name = customerName(order.contact.firstName, order.contact.lastName);
  const intro = m.paylinkIntro(order.orderNumber, total);
  const text = [m.greeting(name), '', intro, url, '', m.paylinkAfter, '', m.closing, '', m.signature, ''].join('\n');
  const e = escapeHtml;
  const html = `<!DOCTYPE html>
<html lang="${lang}"><head><meta charset="utf-8"><title>${e(m.paylinkSubject(order.orderNumber))}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#222">
<p>${e(m.greeting(name))}</p>
<p>${e(intro)}</p>
<p><a href="${e(url)}" style="display:inline-block;padding:10px 18px;background:#c4161c;color:#fff;text-decoration:none;border-radius:4px">${e(m.paylinkButton)}</a></p>
<p><small>${e(url)}</small></p>
<p>${e(m.paylinkAfter)}</p>
<p>${e(m.closing)}</p>
<p>${e(m.signature)}</p>
</body></html>
`;
  return { to: order.contact.email, subject: m.paylinkSubject(order.orderNumber), text, html, language: lang };
}
