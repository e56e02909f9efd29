/** Types of the part of `geoip-country` (CommonJS, ships its GeoLite2 country database) that is used. */
declare module 'geoip-country' {
  /** A lookup hit; `country` is ISO 3166-1 alpha-2. */
  export interface GeoCountry {
    country: string;
    name: string;
    continent: string;
  }
  /** Country of an IPv4/IPv6 literal; null when not in the database (private, reserved, unknown). */
  export function lookup(ip: string): GeoCountry | null;
  const geoip: { lookup: typeof lookup };
  export default geoip;
}
