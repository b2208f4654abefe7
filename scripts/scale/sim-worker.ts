/**
 * A simulated worker: the real LeaseCoordinator (heartbeat, leader turn, claims, awaited polls)
 * and, in place of pumps, a renewer that renews what it holds every renew interval and hands a
 * lease over as soon as a renewal shows a handoff request (a pump would finish its batch first),
 * or releases it when the asker has gone.
 * It can die (stop everything) or drain (leave gracefully).
 */

import { partitionKey } from "../../lib/core/model.js";
import type { Lease, LeaseStore } from "../../lib/core/ports.js";
import { LeaseCoordinator } from "../../lib/core/run/lease-coordinator.js";
import { askerAlive } from "../../lib/core/run/lease-handoffs.js";
import { isReplicatorError } from "../../lib/errors.js";

export interface SimSettings {
  readonly durationMs: number;
  readonly renewIntervalMs: number;
  readonly rebalanceIntervalMs: number;
  readonly maxClaimsPerRound: number;
}

const FAR = Number.MAX_SAFE_INTEGER;

export class SimWorker {
  readonly held = new Map<string, Lease>();
  alive = true;
  draining = false;
  gone = false;
  /** The run's hard deadline (Lambda's); far away unless set. */
  deadline = FAR;
  readonly #coordinator: LeaseCoordinator;
  #nextRound: number;
  #nextRenew: number;
  /** The simulated time of the tick under way: the coordinator's clock. */
  #time: number;

  constructor(
    readonly id: string,
    readonly store: LeaseStore,
    readonly settings: SimSettings,
    readonly startAt: number,
    readonly slot = id,
  ) {
    this.#coordinator = new LeaseCoordinator({
      store,
      workerId: id,
      slot,
      startedAt: startAt,
      ...settings,
      drainLeadMs: 2 * settings.rebalanceIntervalMs + settings.renewIntervalMs,
      clock: { now: () => this.#time },
    });
    this.#time = startAt;
    this.#nextRound = startAt;
    this.#nextRenew = startAt + settings.renewIntervalMs;
  }

  async tick(now: number): Promise<void> {
    this.#time = now;
    if (!this.alive || this.gone || now < this.startAt) return;
    if (now >= this.#nextRenew) {
      await this.#renewAll(now);
      this.#nextRenew = now + this.settings.renewIntervalMs;
    }
    if (now >= this.#nextRound) {
      const { acquired } = await this.#coordinator.rebalance(now, this.deadline, {
        exclude: new Set(this.held.keys()),
        draining: this.draining,
      });
      for (const l of acquired) this.held.set(partitionKey(l), l);
      this.#nextRound = now + this.settings.rebalanceIntervalMs;
    }
    const pollAt = this.#coordinator.nextPollAt;
    if (pollAt !== null && pollAt <= now) {
      const scope = { exclude: new Set(this.held.keys()), draining: this.draining };
      const { acquired } = await this.#coordinator.poll(now, this.deadline, scope);
      for (const l of acquired) this.held.set(partitionKey(l), l);
    }
    if ((this.draining && this.held.size === 0) || now >= this.deadline) {
      // Cut off at its deadline: what it holds is left to expire; only its requests are withdrawn.
      await this.#coordinator.leave(now, { released: new Set(this.held.keys()) });
      this.gone = true;
    }
  }

  async #renewAll(now: number): Promise<void> {
    await Promise.all(
      [...this.held.entries()].map(async ([key, lease]) => {
        try {
          const renewed = await this.store.renew(lease, now + this.settings.durationMs);
          const to = renewed.handoffTo;
          if (to !== null && to !== this.id) {
            this.held.delete(key);
            // As RunLeases.handOver: a gone asker's lease is released; a refused handover too.
            const alive = await askerAlive(this.store, to, now, 0);
            if (!(alive && (await this.store.handOver(renewed, now + this.settings.durationMs))))
              await this.store.release(renewed);
          } else this.held.set(key, renewed);
        } catch (error) {
          if (!isReplicatorError(error, "LEASE_LOST")) throw error;
          this.held.delete(key);
        }
      }),
    );
  }
}
