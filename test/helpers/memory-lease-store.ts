/**
 * The lease store the core's unit tests use: the real one (lib/core/lease/store.ts) over the real
 * in-memory table, so every write is refused or allowed by the same conditions as on DynamoDB
 * and a refusal means the same (the conformance suite holds both backends to it). On top, what
 * tests need: `unavailable` makes every call fail with LEASE_STORE_UNAVAILABLE (before it
 * reaches the table), `calls` counts them, and get, put, snapshot and workers look at and set
 * up the table at once, without a store call.
 */
import { leaseOf, workerOf } from "../../lib/core/lease/items.js";
import { MemoryLeaseTable } from "../../lib/core/lease/memory-table.js";
import type { LeaseStore } from "../../lib/core/lease/model.js";
import { TableLeaseStore } from "../../lib/core/lease/store.js";
import { type Item, isCoordinationKey, isWorkerKey } from "../../lib/core/lease/table.js";
import { partitionKey, type TopicPartition } from "../../lib/core/model.js";
import type { Lease, WorkerRecord } from "../../lib/core/ports.js";
import { ReplicatorError } from "../../lib/errors.js";

type Operation = keyof LeaseStore;

export class InMemoryLeaseStore implements LeaseStore {
  readonly table = new MemoryLeaseTable();
  readonly #store = new TableLeaseStore({ table: this.table });
  unavailable = false;
  readonly calls: Record<Operation, number> = {
    ensure: 0,
    list: 0,
    lease: 0,
    worker: 0,
    scan: 0,
    heartbeat: 0,
    assign: 0,
    removeWorker: 0,
    leader: 0,
    claimLeader: 0,
    claim: 0,
    renew: 0,
    checkpoint: 0,
    resetCheckpoint: 0,
    release: 0,
    requestHandoff: 0,
    withdrawHandoff: 0,
    handOver: 0,
  };

  ensure: LeaseStore["ensure"] = (...a) => this.#call("ensure", () => this.#store.ensure(...a));
  list: LeaseStore["list"] = () => this.#call("list", () => this.#store.list());
  lease: LeaseStore["lease"] = (...a) => this.#call("lease", () => this.#store.lease(...a));
  scan: LeaseStore["scan"] = () => this.#call("scan", () => this.#store.scan());
  heartbeat: LeaseStore["heartbeat"] = (...a) => this.#call("heartbeat", () => this.#store.heartbeat(...a));
  assign: LeaseStore["assign"] = (...a) => this.#call("assign", () => this.#store.assign(...a));
  removeWorker: LeaseStore["removeWorker"] = (...a) =>
    this.#call("removeWorker", () => this.#store.removeWorker(...a));
  worker: LeaseStore["worker"] = (...a) => this.#call("worker", () => this.#store.worker(...a));
  leader: LeaseStore["leader"] = () => this.#call("leader", () => this.#store.leader());
  claimLeader: LeaseStore["claimLeader"] = (...a) =>
    this.#call("claimLeader", () => this.#store.claimLeader(...a));
  claim: LeaseStore["claim"] = (...a) => this.#call("claim", () => this.#store.claim(...a));
  renew: LeaseStore["renew"] = (...a) => this.#call("renew", () => this.#store.renew(...a));
  checkpoint: LeaseStore["checkpoint"] = (...a) =>
    this.#call("checkpoint", () => this.#store.checkpoint(...a));
  resetCheckpoint: LeaseStore["resetCheckpoint"] = (...a) =>
    this.#call("resetCheckpoint", () => this.#store.resetCheckpoint(...a));
  release: LeaseStore["release"] = (...a) => this.#call("release", () => this.#store.release(...a));
  requestHandoff: LeaseStore["requestHandoff"] = (...a) =>
    this.#call("requestHandoff", () => this.#store.requestHandoff(...a));
  withdrawHandoff: LeaseStore["withdrawHandoff"] = (...a) =>
    this.#call("withdrawHandoff", () => this.#store.withdrawHandoff(...a));
  handOver: LeaseStore["handOver"] = (...a) => this.#call("handOver", () => this.#store.handOver(...a));

  /** Every lease, by topic and partition, for assertions. */
  snapshot(): Lease[] {
    return this.table
      .keys()
      .filter((key) => !isCoordinationKey(key))
      .map((key) => leaseOf(key, this.table.peek(key) ?? {}));
  }

  get(tp: TopicPartition): Lease | undefined {
    const key = partitionKey(tp);
    const item = this.table.peek(key);
    return item === undefined ? undefined : leaseOf(key, item);
  }

  /** Every worker item, for assertions. */
  workers(): WorkerRecord[] {
    return this.table
      .keys()
      .filter(isWorkerKey)
      .map((key) => workerOf(key, this.table.peek(key) ?? {}));
  }

  /**
   * Test setup: overwrite a lease item as is. `sourceEpochAt` (default: its checkpoint) is the
   * checkpoint its epoch was stored with; another one stands for an older version that moved the
   * checkpoint without the epoch.
   */
  put(lease: Lease, options: { readonly sourceEpochAt?: number | null } = {}): void {
    const at = options.sourceEpochAt === undefined ? lease.checkpoint : options.sourceEpochAt;
    this.table.write(partitionKey(lease), itemOf(lease, at));
  }

  #call<T>(operation: Operation, run: () => Promise<T>): Promise<T> {
    this.calls[operation]++;
    if (this.unavailable) {
      return Promise.reject(
        new ReplicatorError("LEASE_STORE_UNAVAILABLE", `lease store unavailable (${operation})`),
      );
    }
    return run();
  }
}

/** The item that holds `lease`, absent attributes left out. */
function itemOf(lease: Lease, sourceEpochAt: number | null): Item {
  const optional = {
    owner: lease.owner,
    checkpoint: lease.checkpoint,
    lastProgressAt: lease.lastProgressAt,
    handoffTo: lease.handoffTo,
    targetOffset: lease.targetOffset,
    sourceTopicId: lease.sourceTopicId,
    sourceEpoch: lease.sourceEpoch,
    sourceEpochAt,
    offsetMap: lease.offsetMap,
    producerIds: lease.producerIds?.map(String),
  };
  const item: Item = {
    topic: lease.topic,
    partition: lease.partition,
    counter: lease.counter,
    expiresAt: lease.expiresAt,
  };
  for (const [attribute, value] of Object.entries(optional)) {
    if (value !== null && value !== undefined) Object.assign(item, { [attribute]: value });
  }
  return item;
}
