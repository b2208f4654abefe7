/**
 * A simulated fleet of workers sharing one LeaseStore (in memory or DynamoDB Local), on a
 * simulated clock: lease rules compare the times callers pass, never the store's own clock, so
 * rounds can be seconds apart without waiting. Each round every live worker renews what it holds
 * (handing over what was asked for, as the Worker does after its in-flight batch) and then
 * rebalances (heartbeat, a leader turn, claims of what the leader assigned it), passing what it
 * already works on as `exclude`, as the Worker does; a lease asked for is polled each round.
 */

import { partitionKey } from "../../lib/core/model.js";
import type { Lease, LeaseStore } from "../../lib/core/ports.js";
import { LeaseCoordinator } from "../../lib/core/run/lease-coordinator.js";

export const FLEET_START = 1_000_000;
const FAR = Number.MAX_SAFE_INTEGER;

export function countByOwner(leases: readonly Lease[], now: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of leases)
    if (l.owner !== null && l.expiresAt > now) out.set(l.owner, (out.get(l.owner) ?? 0) + 1);
  return out;
}

/** Fleet settings: a round is one second of simulated time. */
export const FLEET_ROUND_MS = 1_000;

export class LeaseFleet {
  now = FLEET_START;
  claims = 0;
  readonly dead = new Set<string>();
  readonly #coordinators = new Map<string, LeaseCoordinator>();
  readonly #working = new Map<string, Set<string>>();

  constructor(
    readonly store: LeaseStore,
    workers: readonly string[],
    readonly durationMs: number,
  ) {
    for (const id of workers) this.join(id);
  }

  static async over(
    store: LeaseStore,
    partitions: number,
    workers: readonly string[],
    durationMs: number,
  ): Promise<LeaseFleet> {
    await store.ensure(Array.from({ length: partitions }, (_, p) => ({ topic: "t", partition: p })));
    return new LeaseFleet(store, workers, durationMs);
  }

  /** A worker (the real coordinator) joins the fleet; `slot` defaults to its id. */
  join(id: string, slot = id): LeaseCoordinator {
    const coordinator = new LeaseCoordinator({
      store: this.store,
      workerId: id,
      slot,
      startedAt: this.now,
      durationMs: this.durationMs,
      renewIntervalMs: FLEET_ROUND_MS,
      rebalanceIntervalMs: FLEET_ROUND_MS,
      maxClaimsPerRound: 1_000,
      drainLeadMs: 3 * FLEET_ROUND_MS,
      clock: { now: () => this.now },
    });
    this.#coordinators.set(id, coordinator);
    return coordinator;
  }

  async round(): Promise<void> {
    this.now += FLEET_ROUND_MS;
    for (const [id, coordinator] of this.#coordinators) {
      if (this.dead.has(id)) continue;
      for (const l of await this.store.list()) {
        if (l.owner !== id || l.expiresAt <= this.now) continue;
        const renewed = await this.store.renew(l, this.now + this.durationMs);
        if (renewed.handoffTo !== null) await this.store.handOver(renewed, this.now + this.durationMs);
      }
      const working = this.#working.get(id) ?? new Set<string>();
      for (const l of await this.store.list())
        if (l.owner !== id || l.expiresAt <= this.now) working.delete(partitionKey(l));
      const { acquired: handed } = await coordinator.poll(this.now, FAR, { exclude: working });
      const { acquired } = await coordinator.rebalance(this.now, FAR, { exclude: working });
      for (const l of [...handed, ...acquired]) working.add(partitionKey(l));
      this.#working.set(id, working);
      this.claims += handed.length + acquired.length;
    }
  }

  /** Live leases per worker, in the order the workers were given. */
  async counts(): Promise<number[]> {
    const byOwner = countByOwner(await this.store.list(), this.now);
    return [...this.#coordinators.keys()].map((id) => byOwner.get(id) ?? 0);
  }
}
