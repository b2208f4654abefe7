/**
 * How long a run leaves alone a partition whose pump stopped on a non-retryable error
 * (RECORD_REJECTED, CORRUPT_BATCH, Kafka's INVALID_TXN_STATE or UNKNOWN_SERVER_ERROR as
 * KAFKA_FATAL, ...). The worker checkpoints and releases the partition as any stop does and
 * publishes the backoff in its heartbeat (WorkerHeartbeat.backoff), so the leader gives the
 * partition to another worker at once; this worker takes it again only once the backoff is
 * over. Some of these errors pass by themselves (a transaction coordinator that moved, a broker
 * restarted mid-transaction), others need an operator (failure-report.ts names the setting);
 * the fleet cannot tell which, so it retries both, ever less often on the worker that failed.
 *
 * The numbers: one lease duration (leases.durationMs, 60 s by default), doubled by each failure
 * of the partition in a row on this worker, up to BACKOFF_CAP_MS (or the lease duration, if
 * longer): 60, 120, 240, 300, 300 s ...
 *  - One lease duration, because that is already how long a partition may go uncopied when its
 *    holder dies, so lag thresholds allow for it, and a single worker (a CLI `run` alone) copies
 *    it again within two lease durations of a failure that passed.
 *  - Capped at 5 minutes, so a partition that keeps failing is tried by each live worker at
 *    least every 5 minutes: a setting fixed meanwhile is picked up without a restart, and the
 *    PartitionsFailing alarm (failures in 2 of 15 minutes) stays raised while the failure lasts.
 *    Runs end anyway (a CLI round is 5 minutes, a Lambda run a tick plus 80 s); the next starts
 *    with no backoff, so a poison partition costs each run one attempt early on.
 */

/** The longest a worker leaves a failed partition alone (unless a lease lasts longer). */
export const BACKOFF_CAP_MS = 5 * 60_000;

export interface Backoff {
  /** Failures of the partition in a row on this worker (since a term of it last ended well). */
  readonly failures: number;
  /** Epoch ms until which this worker does not take the partition. */
  readonly until: number;
}

export class FailureBackoff {
  readonly #baseMs: number;
  readonly #capMs: number;
  readonly #entries = new Map<string, Backoff>();

  constructor(leaseDurationMs: number) {
    this.#baseMs = leaseDurationMs;
    this.#capMs = Math.max(BACKOFF_CAP_MS, leaseDurationMs);
  }

  /** Notes a failure of the partition `key` at `now`; its backoff. */
  failed(key: string, now: number): Backoff {
    const failures = (this.#entries.get(key)?.failures ?? 0) + 1;
    // The exponent is bounded so the product stays finite whatever the count.
    const delay = Math.min(this.#capMs, this.#baseMs * 2 ** Math.min(failures - 1, 20));
    const backoff = { failures, until: now + delay };
    this.#entries.set(key, backoff);
    return backoff;
  }

  /** A term of `key` ended without an error: a later failure starts from the first backoff again. */
  recovered(key: string): void {
    this.#entries.delete(key);
  }

  /** The partitions still in their backoff at `now`, with its end: what the heartbeat publishes. */
  pending(now: number): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const [key, b] of this.#entries) if (b.until > now) out.set(key, b.until);
    return out;
  }
}
