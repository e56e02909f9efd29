/**
 * `devGetRequestHeaders` and `devGetRemoteIp`: what the service sees of a request.
 *
 * The client address honours only the proxies configured in `TRUSTED_PROXIES` (Express `trust proxy`, set in
 * `app.ts`): `req.ip` is the socket peer unless that peer is trusted, and then the nearest untrusted address
 * of `X-Forwarded-For`. A forwarded header sent by an untrusted peer is reported but never believed.
 */
import type { Request } from 'express';
import { maskHeaders } from '@sports-timing/shared';
import { normalizeIp } from '../countries/geoip';

/** The request's headers (lower-case names, repeated ones joined with `, `), secrets masked as `***`. */
export function requestHeaders(req: Request): Record<string, string> {
  return maskHeaders(req.headers);
}

/** Spec `RemoteIpResponse`. */
export interface RemoteIpInfo {
  /** Effective client address (IPv4-mapped IPv6 shown as IPv4). */
  remoteIp: string;
  /** Address of the TCP peer. */
  socketAddress: string;
  /** `X-Forwarded-For` entries as received, in order; empty when absent. */
  forwardedFor: string[];
}

/** The client address as determined under the configured trusted proxies. */
export function remoteIpOf(req: Request): RemoteIpInfo {
  const socket = req.socket.remoteAddress ?? '';
  const xff = req.headers['x-forwarded-for'];
  const forwardedFor = (Array.isArray(xff) ? xff.join(',') : (xff ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const effective = req.ip ?? socket;
  return { remoteIp: normalizeIp(effective) ?? effective, socketAddress: normalizeIp(socket) ?? socket, forwardedFor };
}
