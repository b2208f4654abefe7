/**
 * Lease helpers for unit tests: a lease as `ensure` makes it, and a store with some calls replaced.
 * The in-memory LeaseStore itself is memory-lease-store.ts.
 */
import type { TopicPartition } from "../../lib/core/model.js";
import type { Lease, LeaseStore } from "../../lib/core/ports.js";

/** A lease as LeaseStore.ensure creates it (nobody's, never checkpointed), with `fields` on top. */
export function leaseOf(tp: TopicPartition, fields: Partial<Lease> = {}): Lease {
  return {
    topic: tp.topic,
    partition: tp.partition,
    owner: null,
    counter: 0,
    expiresAt: 0,
    checkpoint: null,
    lastProgressAt: null,
    handoffTo: null,
    ...fields,
  };
}

/** A LeaseStore that forwards to `store`, with some calls replaced (to slow, fail or watch them). */
export function storeWith(store: LeaseStore, overrides: Partial<LeaseStore>): LeaseStore {
  return {
    ensure: (partitions) => store.ensure(partitions),
    list: () => store.list(),
    lease: (tp) => store.lease(tp),
    scan: () => store.scan(),
    heartbeat: (beat, options) => store.heartbeat(beat, options),
    assign: (workerId, assignment) => store.assign(workerId, assignment),
    removeWorker: (observed) => store.removeWorker(observed),
    worker: (workerId, options) => store.worker(workerId, options),
    leader: () => store.leader(),
    claimLeader: (observed, owner, expiresAt) => store.claimLeader(observed, owner, expiresAt),
    claim: (observed, owner, expiresAt) => store.claim(observed, owner, expiresAt),
    renew: (held, expiresAt) => store.renew(held, expiresAt),
    checkpoint: (held, next, now, targetOffset, source, producerIds) =>
      store.checkpoint(held, next, now, targetOffset, source, producerIds),
    resetCheckpoint: (held, next, now, reason, position) =>
      store.resetCheckpoint(held, next, now, reason, position),
    release: (held) => store.release(held),
    requestHandoff: (observed, requester) => store.requestHandoff(observed, requester),
    withdrawHandoff: (observed, requester) => store.withdrawHandoff(observed, requester),
    handOver: (held, expiresAt) => store.handOver(held, expiresAt),
    ...overrides,
  };
}

/**
 * A LeaseStore whose call to `method` freezes once when armed: before forwarding, the caller waits
 * while `world` runs (the clock moves, other workers act), as in a process paused mid-call.
 */
export function freezingIn<K extends keyof LeaseStore>(store: LeaseStore, method: K) {
  let world: (() => Promise<void>) | null = null;
  const forward = store[method] as (...args: unknown[]) => Promise<unknown>;
  const frozen = async (...args: unknown[]) => {
    const pending = world;
    world = null;
    if (pending !== null) await pending();
    return forward.apply(store, args);
  };
  return {
    store: storeWith(store, { [method]: frozen } as Partial<LeaseStore>),
    /** The next call to `method` runs `during` first. */
    arm(during: () => Promise<void>) {
      world = during;
    },
    /** Whether the armed freeze has happened. */
    get froze() {
      return world === null;
    },
  };
}
