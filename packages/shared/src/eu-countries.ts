/**
 * EU member states (ISO 3166-1 alpha-2): where the shop ships by DHL Paket International (ordering's couriers) and
 * where the ERP simulator, standing in for weclapp's tax determination, charges VAT on a delivery.
 */
export const EU_COUNTRIES: ReadonlySet<string> = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
]);
