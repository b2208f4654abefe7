/**
 * What a run asks of the lease store for the leases its pumps held: renew, hand over, release.
 * None of these is retried: a failed renewal leaves the lease valid by our clock until it
 * expires (the pump stops writing before that), and a failed handover or release leaves the
 * lease to expire.
 */
import { describeError, isReplicatorError } from "../errors.js";
import type { HeldLease } from "./held-lease.js";
import type { Clock, LeaseStore, Logger } from "./ports.js";

export interface RunLeasesOptions {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** WorkerSettings.leases.durationMs */
  readonly durationMs: number;
}

export class RunLeases {
  readonly #o: RunLeasesOptions;

  constructor(options: RunLeasesOptions) {
    this.#o = options;
  }

  /** Renewals run side by side so one slow store call does not let other leases run out. */
  async renewAll(held: readonly HeldLease[], expiresAt: number): Promise<void> {
    await Promise.all(held.map((h) => this.#renew(h, expiresAt)));
  }

  async #renew(held: HeldLease, expiresAt: number): Promise<void> {
    if (held.lost || held.signal.aborted || expiresAt <= held.lease.expiresAt) return;
    try {
      held.renewed(await this.#o.store.renew(held.lease, expiresAt));
    } catch (error) {
      if (isReplicatorError(error, "LEASE_LOST")) {
        held.markLost();
        return;
      }
      // The pump keeps writing only while the lease is valid by our clock.
      this.#o.logger.warn("lease renewal failed", { ...held.route.source, ...describeError(error) });
    }
  }

  async handOver(held: HeldLease): Promise<void> {
    try {
      // The taker's lease, so not capped by our deadline: the taker caps it by its own
      // (HeldLease.expiresAt) and renews it from there.
      const expiresAt = this.#o.clock.now() + this.#o.durationMs;
      const handed = await this.#o.store.handOver(held.lease, expiresAt);
      this.#o.logger.info(handed ? "lease handed over" : "lease handover refused; it will expire", {
        ...held.route.source,
        to: held.lease.handoffTo,
      });
    } catch (error) {
      this.#o.logger.warn("handing lease over failed; it will expire", {
        ...held.route.source,
        ...describeError(error),
      });
    }
  }

  async release(held: HeldLease): Promise<void> {
    try {
      await this.#o.store.release(held.lease);
    } catch (error) {
      this.#o.logger.warn("releasing lease failed; it will expire", {
        ...held.route.source,
        ...describeError(error),
      });
    }
  }
}
