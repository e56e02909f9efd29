/**
 * `dev/qrcode` (ordering spec §4.9) with the `qrcode` package: PNG, SVG or UTF-8 block text, error
 * correction L/M/Q/H, `pixels` per module and a quiet zone of 4 modules.
 *
 * The spec bounds `pixels` (1–50) and `content` (2048 characters); together they could still ask for a PNG of
 * (177 + 8) × 50 = 9,250 pixels square (~340 MB of raw pixels), so the rendered side is also bounded by
 * {@link MAX_QR_IMAGE_SIDE} and a larger request is a 400 naming `pixels`.
 */
import QRCode from 'qrcode';
import { validationError } from '@sports-timing/shared';

/** Output format (spec `QrCodeFileFormat`). */
export type QrFormat = 'png' | 'svg' | 'utf8';
/** Error correction level (spec `ECCLevel`). */
export type QrEcc = 'L' | 'M' | 'Q' | 'H';

/** Largest rendered image side (png, svg), pixels. */
export const MAX_QR_IMAGE_SIDE = 2048;
/** Quiet zone around the code, modules (ISO/IEC 18004 minimum). */
export const QR_MARGIN = 4;

/** A rendered code: body and its media type. */
export interface RenderedQrCode {
  contentType: string;
  body: Buffer | string;
}

/** Renders `content`; throws a 400 when it does not fit a QR code at `ecc` or the image would be too large. */
export async function renderQrCode(content: string, opts: { format: QrFormat; ecc: QrEcc; pixels: number }): Promise<RenderedQrCode> {
  let modules: number;
  try {
    modules = QRCode.create(content, { errorCorrectionLevel: opts.ecc }).modules.size;
  } catch {
    throw validationError({ content: [`is too long for a QR code with error correction ${opts.ecc}.`] });
  }
  const side = (modules + 2 * QR_MARGIN) * opts.pixels;
  if (opts.format !== 'utf8' && side > MAX_QR_IMAGE_SIDE) {
    throw validationError({ pixels: [`would make an image of ${side} pixels; at most ${MAX_QR_IMAGE_SIDE} are allowed for this content (use at most ${Math.floor(MAX_QR_IMAGE_SIDE / (modules + 2 * QR_MARGIN))}).`] });
  }
  const base = { errorCorrectionLevel: opts.ecc, margin: QR_MARGIN } as const;
  // pngjs options beyond @types/qrcode: 8-bit grayscale (a quarter of RGBA's bytes) with the `Up` filter, which
  // suits rows that mostly repeat the previous one: about half the CPU time of the default at a similar size.
  const pngRenderer = { deflateLevel: 9, colorType: 0, filterType: 2 };
  switch (opts.format) {
    case 'png':
      return { contentType: 'image/png', body: await QRCode.toBuffer(content, { ...base, type: 'png', scale: opts.pixels, rendererOpts: pngRenderer }) };
    case 'svg':
      return { contentType: 'image/svg+xml; charset=utf-8', body: await QRCode.toString(content, { ...base, type: 'svg', width: side }) };
    case 'utf8':
      return { contentType: 'text/plain; charset=utf-8', body: await QRCode.toString(content, { ...base, type: 'utf8' }) };
  }
}
