/**
 * Offline geo-IP (card-reservation `get-country-from-my-ip`): the GeoLite2 country database shipped in
 * the `geoip-country` package, loaded into memory once; never an outbound call. Behind a one-method
 * interface (docs/decisions.md §1: one small interface per third party).
 */
import { BlockList, isIP } from 'node:net';
import geoip from 'geoip-country';

/** Country lookup of IP address literals. */
export interface GeoIpLookup {
  /** ISO 3166-1 alpha-2 code of a public address; null for private, reserved or unknown ones. */
  countryOf(ip: string): string | null;
}

// Special-purpose ranges (RFC 6890 and successors) that never locate a customer.
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/**
 * An IP literal in its plain form: IPv4-mapped IPv6 (`::ffff:1.2.3.4`, as Node reports IPv4 peers on
 * dual-stack sockets) becomes IPv4; IPv6 zone ids are dropped. Null when not an IP literal.
 */
export function normalizeIp(raw: string): string | null {
  const ip = raw.trim().replace(/%[\w.-]+$/, '');
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped && isIP(mapped[1]) === 4) return mapped[1];
  return isIP(ip) ? ip.toLowerCase() : null;
}

/** Whether a normalized literal lies in a private, loopback, link-local, documentation or other special range. */
function isNonPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 0) return true;
  return NON_PUBLIC.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The geo-IP lookup over the shipped GeoLite2 country database. */
export const geoIpLookup: GeoIpLookup = {
  countryOf(ip) {
    const normalized = normalizeIp(ip);
    if (!normalized || isNonPublicAddress(normalized)) return null;
    const hit = geoip.lookup(normalized);
    return hit && /^[A-Z]{2}$/.test(hit.country) ? hit.country : null;
  },
};
