/**
 * The periodic check of changed sales orders (docs/weclapp.md "Shipped and completed") for when weclapp's
 * webhooks are silent or deactivated.
 */
import type { Logger } from 'pino';
import type { ErpSystem } from '../../erp/erp.types';
import { ORDER_ERP_SYSTEM } from './erp-hand-off';
import type { SalesOrderSync } from './sales-order-sync';

/**
 * Runs {@link SalesOrderSync.pollErpSalesOrders} every `intervalMs` (docs/weclapp.md "Shipped and completed"), each time
 * for the sales orders changed since the previous run started (minus a minute of overlap for clock skew between
 * us and the ERP; the first run looks back a day). A failed run is logged and repeated from the same point.
 */
export class ErpSalesOrderPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private since = Date.now() - 86_400_000;

  constructor(private readonly opts: { salesOrders: SalesOrderSync; logger: Logger; intervalMs: number; system?: ErpSystem }) {}

  /** Starts the periodic check (unref'd timer). */
  start(): void {
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.runOnce());
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  private async runOnce(): Promise<void> {
    const started = Date.now();
    try {
      const n = await this.opts.salesOrders.pollErpSalesOrders(this.opts.system ?? ORDER_ERP_SYSTEM, this.since - 60_000);
      this.since = started;
      if (n > 0) this.opts.logger.debug({ salesOrders: n }, 'periodic sales order check applied');
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, 'periodic sales order check failed; repeated at the next interval');
    }
  }

  /** Stops it and waits for a run in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
