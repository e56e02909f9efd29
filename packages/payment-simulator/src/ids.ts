/**
 * Id allocation of the payment simulator: paylink, gateway and transaction ids each counted from a fixed
 * start, or never below the tenths of seconds since 2025 (`idsFromTime`, see `PaymentSimulatorOptions`).
 */

/** 2025-01-01T00:00:00Z, epoch ms: the origin of time-derived ids. */
const ID_EPOCH_MS = Date.UTC(2025, 0, 1);

/** What gets an id of its own sequence. */
type IdKind = 'invoice' | 'gateway' | 'transaction';

/** The simulator's id sequences. */
export class IdAllocator {
  private next = { invoice: 0, gateway: 0, transaction: 0, contact: 0 };

  constructor(private readonly idsFromTime: boolean) {
    this.reset();
  }

  /** Back to the seed's starts. */
  reset(): void {
    this.next = { invoice: 100, gateway: 500, transaction: 1000, contact: 3000 };
  }

  /**
   * The next id of `kind`: one above the last, and with `idsFromTime` at least the tenths of seconds since
   * 2025 (fits PostgreSQL `integer` until 2031), so a restart does not hand out ids of an earlier run unless
   * that run made more than ten per second on average.
   */
  allocate(kind: IdKind): number {
    const floor = this.idsFromTime ? Math.floor((Date.now() - ID_EPOCH_MS) / 100) : 0;
    this.next[kind] = Math.max(this.next[kind] + 1, floor);
    return this.next[kind];
  }

  /** The next payer contact id (contacts exist only inside transactions, so no time floor). */
  contact(): number {
    return ++this.next.contact;
  }
}
