/**
 * What a run asks of the lease store for the leases its pumps held: renew, hand over, release;
 * and which of them are still to be given back. None of these is retried: a failed renewal
 * leaves the lease valid by our clock until it expires (the pump stops writing before that),
 * and a failed handover or release leaves the lease to expire.
 */
import { describeError, isReplicatorError } from "../../errors.js";
import { partitionKey } from "../model.js";
import type { Clock, LeaseStore, Logger } from "../ports.js";
import type { HeldLease } from "../pump/held-lease.js";
import { askerAlive } from "./lease-handoffs.js";

export interface RunLeasesOptions {
  readonly store: LeaseStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** WorkerSettings.leases.durationMs */
  readonly durationMs: number;
  /** WorkerSettings.writeSafetyMarginMs: an asker takes nothing this close to its deadline. */
  readonly writeSafetyMarginMs: number;
}

export class RunLeases {
  readonly #o: RunLeasesOptions;
  /** Leases whose pump ended without losing them, ours to resume: released at the run's end. */
  readonly #kept = new Map<string, HeldLease>();
  /** Handovers and releases under way, by partition key; the run waits for them before it returns. */
  readonly #giving = new Map<string, Promise<void>>();

  constructor(options: RunLeasesOptions) {
    this.#o = options;
  }

  /** Keeps `held` (its pump ended) for release at the end, unless `resumed` first. */
  keep(key: string, held: HeldLease): void {
    this.#kept.set(key, held);
  }

  /** A pump runs on the partition `key` again: nothing of an earlier term to release. */
  resumed(key: string): void {
    this.#kept.delete(key);
  }

  /**
   * Gives `held` back now, in the background: to the worker that asked for it (who is waiting),
   * else released for whoever the leader assigns it to.
   */
  giveBack(held: HeldLease): void {
    const key = partitionKey(held.lease);
    const given = (held.handoffRequested ? this.handOver(held) : this.release(held)).finally(() =>
      this.#giving.delete(key),
    );
    this.#giving.set(key, given);
  }

  /**
   * Partitions whose lease is being handed over or released: not to be taken up meanwhile. The
   * lease is still ours, and once the asker withdrew nothing else marks it as going: a pump
   * started on it would run on a lease the give-back then releases.
   */
  get givingBack(): ReadonlySet<string> {
    return new Set(this.#giving.keys());
  }

  /**
   * The run's end: releases every lease kept, and waits for those being given back. Returns the
   * keys of the leases it released.
   */
  async finish(): Promise<ReadonlySet<string>> {
    const released = new Set(this.#kept.keys());
    await Promise.all([...this.#kept.values()].map((held) => this.release(held)));
    this.#kept.clear();
    await Promise.all([...this.#giving.values()]);
    return released;
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

  /**
   * Hands the lease to the worker that asked for it, or releases it when that worker's heartbeat
   * says it has gone (it ended after asking, or died): handed to it, the lease would sit idle
   * until its fresh expiry; released, whoever it is assigned to now claims it at once (the asker
   * too, should it be alive after all).
   */
  async handOver(held: HeldLease): Promise<void> {
    const to = held.lease.handoffTo;
    const { store, clock, writeSafetyMarginMs } = this.#o;
    if (to !== null && !(await askerAlive(store, to, clock.now(), writeSafetyMarginMs))) {
      this.#o.logger.info("the worker that asked for the lease has gone; releasing it", {
        ...held.route.source,
        to,
      });
      return this.release(held);
    }
    try {
      // The taker's lease, so not capped by our deadline: the taker caps it by its own
      // (HeldLease.expiresAt) and renews it from there.
      const expiresAt = this.#o.clock.now() + this.#o.durationMs;
      const handed = await this.#o.store.handOver(held.lease, expiresAt);
      this.#o.logger.info(handed ? "lease handed over" : "lease handover refused; releasing it", {
        ...held.route.source,
        to: held.lease.handoffTo,
      });
      // Refused: the asker withdrew (its run ended: LeaseCoordinator.leave) or the lease moved
      // (then the release is refused too). Our pump has stopped, so nobody would copy it.
      if (!handed) await this.release(held);
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
