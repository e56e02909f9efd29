/**
 * `devGetQrcode` with the `qrcode` package: PNG, SVG or UTF-8 block text, error
 * correction L/M/Q/H, `pixels` per module and a quiet zone of 4 modules.
 *
 * The spec bounds `pixels` (1–50) and `content` (2048 characters); together they could still ask for a PNG of
 * (177 + 8) × 50 = 9,250 pixels square (~340 MB of raw pixels), so the rendered side is also bounded by
 * {@link MAX_QR_IMAGE_SIDE} and a larger request is a 400 naming `pixels`.
 *
 * PNGs are encoded on a worker thread ({@link QrCodeRenderer}, one per app, built by `composeOrdering`): pngjs
 * filters and deflates in plain JavaScript, more than a second of CPU for the largest allowed image, which on the
 * event loop would hold up every other request of the service for as long.
 */
import { Worker } from 'node:worker_threads';
import QRCode from 'qrcode';
import { validationError } from '@sports-timing/shared';
import type { components } from '../generated/openapi';

/** Output format (spec `QrCodeFileFormat`). */
export type QrFormat = components['schemas']['QrCodeFileFormat'];
/** Error correction level (spec `ECCLevel`). */
export type QrEcc = components['schemas']['ECCLevel'];

/** Largest rendered image side (png, svg), pixels. @internal */
export const MAX_QR_IMAGE_SIDE = 2048;
/** Quiet zone around the code, modules (ISO/IEC 18004 minimum). */
const QR_MARGIN = 4;

/** A rendered code: body and its media type. */
export interface RenderedQrCode {
  contentType: string;
  body: Buffer | string;
}

/**
 * The worker's code, plain CommonJS (it runs the same under tsx, jest and the compiled service): it loads
 * the `qrcode` package the service resolved and answers `{ id, content, options }` with `{ id, png }` or
 * `{ id, error }`, one request at a time.
 */
const PNG_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const QRCode = require(workerData.qrcode);
parentPort.on('message', ({ id, content, options }) => {
  QRCode.toBuffer(content, options).then(
    (png) => parentPort.postMessage({ id, png }),
    (err) => parentPort.postMessage({ id, error: String(err && err.message || err) }),
  );
});
`;

interface PngRequest {
  resolve: (png: Buffer) => void;
  reject: (err: Error) => void;
}

/**
 * Renders QR codes (`devGetQrcode`), PNGs on a worker thread of its own, started on first use and again after it
 * died. The worker keeps the process up only while a request is pending (ref'd per request, unref'd when none is
 * left), so it never holds up an exit and needs no stop.
 */
export class QrCodeRenderer {
  private pngWorker: Worker | undefined;
  private readonly pendingPngs = new Map<number, PngRequest>();
  private nextPngId = 0;

  /** Renders `content`; throws a 400 when it does not fit a QR code at `ecc` or the image would be too large. */
  async render(content: string, opts: { format: QrFormat; ecc: QrEcc; pixels: number }): Promise<RenderedQrCode> {
    let modules: number;
    try {
      modules = QRCode.create(content, { errorCorrectionLevel: opts.ecc }).modules.size;
    } catch {
      throw validationError({ content: [`is too long for a QR code with error correction ${opts.ecc}.`] });
    }
    const side = (modules + 2 * QR_MARGIN) * opts.pixels;
    if (opts.format !== 'utf8' && side > MAX_QR_IMAGE_SIDE) {
      throw validationError({
        pixels: [
          `would make an image of ${side} pixels; at most ${MAX_QR_IMAGE_SIDE} are allowed for this content (use at most ${Math.floor(MAX_QR_IMAGE_SIDE / (modules + 2 * QR_MARGIN))}).`,
        ],
      });
    }
    const base = { errorCorrectionLevel: opts.ecc, margin: QR_MARGIN } as const;
    // pngjs options beyond @types/qrcode: 8-bit grayscale (a quarter of RGBA's bytes) with the `Up` filter, which
    // suits rows that mostly repeat the previous one: about half the CPU time of the default at a similar size.
    const pngRenderer = { deflateLevel: 9, colorType: 0, filterType: 2 };
    switch (opts.format) {
      case 'png':
        return {
          contentType: 'image/png',
          body: await this.renderPngOffThread(content, { ...base, type: 'png', scale: opts.pixels, rendererOpts: pngRenderer }),
        };
      case 'svg':
        return { contentType: 'image/svg+xml; charset=utf-8', body: await QRCode.toString(content, { ...base, type: 'svg', width: side }) };
      case 'utf8':
        return { contentType: 'text/plain; charset=utf-8', body: await QRCode.toString(content, { ...base, type: 'utf8' }) };
    }
  }

  /** The PNG worker (see the class). */
  private worker(): Worker {
    if (this.pngWorker) return this.pngWorker;
    const w = new Worker(PNG_WORKER_SOURCE, { eval: true, workerData: { qrcode: require.resolve('qrcode') } });
    const pending = this.pendingPngs;
    w.on('message', (m: { id: number; png?: Uint8Array; error?: string }) => {
      const req = pending.get(m.id);
      pending.delete(m.id);
      if (pending.size === 0) w.unref();
      if (!req) return;
      if (m.png) req.resolve(Buffer.from(m.png.buffer, m.png.byteOffset, m.png.byteLength));
      else req.reject(new Error(`QR code PNG: ${m.error ?? 'no image'}`));
    });
    const fail = (err: Error) => {
      if (this.pngWorker === w) this.pngWorker = undefined;
      for (const req of pending.values()) req.reject(err);
      pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`QR code PNG worker exited (${code})`)));
    this.pngWorker = w;
    return w;
  }

  /**
   * `QRCode.toBuffer(content, options)` on the PNG worker thread: the same bytes, without blocking the event
   * loop. Rejects when the worker fails (a 500 to the caller).
   */
  private renderPngOffThread(content: string, options: QRCode.QRCodeToBufferOptions & { rendererOpts?: object }): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const id = this.nextPngId++;
      this.pendingPngs.set(id, { resolve, reject });
      const w = this.worker();
      w.ref();
      w.postMessage({ id, content, options });
    });
  }
}
