/**
 * The LeaseStore, written once over a LeaseTable (table.ts), modelled on the Kinesis Client
 * Library's lease table: one item per source topic-partition (items.ts), an owner, and a counter
 * that is the fencing token. Two rules make it safe with any number of workers and any clock
 * skew between them:
 *   1. Every write that decides ownership or progress is conditional on what the writer saw
 *      (owner and counter), so a worker acting on a stale view fails instead of overwriting.
 *      The conditions, and the race each prevents, are in conditions.ts.
 *   2. The counter grows on every claim, so a holder that lost the lease and got it back (or a
 *      worker id that is reused) can never be mistaken for the holder it used to be.
 * A refused write is classified here (loss.ts says what it means). The protocol's own items are
 * coordination.ts's, the whole-table reads reader.ts's.
 */
import { partitionKey, type TopicPartition } from "../model.js";
import { requireEpochMs, requireOffset, requireWorkerId } from "./arguments.js";
import { checkpointWrite, resetCheckpointWrite } from "./checkpoint.js";
import { LeaseConditions } from "./conditions.js";
import { CoordinationStore } from "./coordination.js";
import { forEachLimited } from "./for-each-limited.js";
import { freeLeaseItem, leaseOf } from "./items.js";
import { leaseLost, requireHolder, settleRefusedCheckpoint } from "./loss.js";
import type {
  CheckpointResetReason,
  Condition,
  HeartbeatOptions,
  LeaderLease,
  Lease,
  LeaseStore,
  SourcePosition,
  TableSnapshot,
  WorkerHeartbeat,
  WorkerRecord,
} from "./model.js";
import { LeaseReader, type SkipObservers } from "./reader.js";
import {
  ChangeSet,
  EXISTING_MAX_KEYS,
  type Item,
  type LeaseTable,
  type WriteOutcome,
  writtenItem,
} from "./table.js";

export interface TableLeaseStoreOptions extends SkipObservers {
  readonly table: LeaseTable;
  /**
   * Source of `updatedAt`, which is informational only: no condition ever compares it.
   * @default Date.now
   */
  readonly clock?: { now(): number };
}

/** Parallel puts in `ensure`: enough to create thousands of leases quickly, few enough not to self-throttle. */
const ENSURE_CONCURRENCY = 16;

const systemTime = { now: () => Date.now() };

/** A holder's write reads both: the lease as written, or why it was refused. */
const BOTH = ["item", "current"] as const;

export class TableLeaseStore implements LeaseStore {
  readonly #table: LeaseTable;
  readonly #clock: { now(): number };
  readonly #reader: LeaseReader;
  readonly #coordination: CoordinationStore;

  constructor(options: TableLeaseStoreOptions) {
    this.#table = options.table;
    this.#clock = options.clock ?? systemTime;
    this.#reader = new LeaseReader(options.table, options);
    this.#coordination = new CoordinationStore(options.table, this.#clock);
  }

  /** Consistent reads of which keys exist, then a conditional put of each missing one. */
  async ensure(partitions: readonly TopicPartition[]): Promise<void> {
    const unique = new Map(partitions.map((tp) => [partitionKey(tp), tp]));
    const keys = [...unique.keys()];
    const existing = new Set<string>();
    for (let i = 0; i < keys.length; i += EXISTING_MAX_KEYS) {
      for (const key of await this.#table.existing(keys.slice(i, i + EXISTING_MAX_KEYS))) existing.add(key);
    }
    const missing = [...unique.entries()].filter(([key]) => !existing.has(key)).map(([, tp]) => tp);
    await forEachLimited(missing, ENSURE_CONCURRENCY, async (tp) => {
      // A refusal means another worker created it meanwhile: nothing to do.
      await this.#table.put(partitionKey(tp), freeLeaseItem(tp, this.#clock.now()), {
        operation: "ensure",
        condition: LeaseConditions.create(),
      });
    });
  }

  list(): Promise<Lease[]> {
    return this.#reader.list();
  }

  async lease(tp: TopicPartition): Promise<Lease | null> {
    const key = partitionKey(tp);
    const item = await this.#table.get(key, { consistent: true });
    return item === undefined ? null : leaseOf(key, item);
  }

  scan(): Promise<TableSnapshot> {
    return this.#reader.scan();
  }

  heartbeat(beat: WorkerHeartbeat, options?: HeartbeatOptions): Promise<WorkerRecord> {
    return this.#coordination.heartbeat(beat, options);
  }

  assign(workerId: string, assignment: readonly string[]): Promise<boolean> {
    return this.#coordination.assign(workerId, assignment);
  }

  removeWorker(observed: WorkerRecord): Promise<boolean> {
    return this.#coordination.removeWorker(observed);
  }

  worker(workerId: string, options?: { readonly consistent?: boolean }): Promise<WorkerRecord | null> {
    return this.#coordination.worker(workerId, options);
  }

  leader(): Promise<LeaderLease | null> {
    return this.#coordination.leader();
  }

  claimLeader(observed: LeaderLease | null, owner: string, expiresAt: number): Promise<LeaderLease | null> {
    return this.#coordination.claimLeader(observed, owner, expiresAt);
  }

  async claim(observed: Lease, owner: string, expiresAt: number): Promise<Lease | null> {
    requireEpochMs("claim", "expiresAt", expiresAt);
    requireWorkerId("claim", "owner", owner);
    // A handoff request is addressed to the previous holder; the new one starts without it.
    const changes = new ChangeSet()
      .with("owner", owner)
      .with("counter", observed.counter + 1)
      .with("expiresAt", expiresAt)
      .with("updatedAt", this.#clock.now())
      .without("handoffTo");
    const outcome = await this.#write(observed, "claim", changes, LeaseConditions.claim(observed), ["item"]);
    return outcome.ok ? this.#leaseOf(observed, "claim", outcome.item) : null;
  }

  async renew(held: Lease, expiresAt: number): Promise<Lease> {
    requireEpochMs("renew", "expiresAt", expiresAt);
    const holder = requireHolder(held, "renew");
    const changes = new ChangeSet().with("expiresAt", expiresAt).with("updatedAt", this.#clock.now());
    const outcome = await this.#write(held, "renew", changes, LeaseConditions.renew(holder), BOTH);
    if (!outcome.ok) throw leaseLost(held, "renew", this.#current(held, outcome.current), null);
    return this.#leaseOf(held, "renew", outcome.item);
  }

  /**
   * Throws LEASE_LOST both when the lease is no longer ours and when `nextOffset` is behind the
   * stored checkpoint (details.reason "checkpoint-ahead"). Under the same owner and counter only
   * this holder ever wrote the checkpoint, so a stored value ahead of ours means our view of the
   * lease is not the truth any more (a delayed duplicate write, or a second loop on the same
   * lease): the only safe reaction is the one LEASE_LOST already triggers, stop the partition
   * and let the next claim resume from what is stored. A retryable error would loop forever.
   * Writing the same checkpoint again succeeds and changes nothing but `updatedAt` (and the
   * target position, when one is given), which makes a retry of a write that did land harmless.
   */
  async checkpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    targetOffset?: number,
    source?: SourcePosition,
    producerIds?: readonly bigint[],
  ): Promise<Lease> {
    requireOffset("checkpoint", "nextOffset", nextOffset);
    if (targetOffset !== undefined) requireOffset("checkpoint", "targetOffset", targetOffset);
    requireEpochMs("checkpoint", "now", now);
    const holder = requireHolder(held, "checkpoint");
    if (held.checkpoint !== null && nextOffset < held.checkpoint) {
      throw leaseLost(held, "checkpoint", undefined, nextOffset, "checkpoint-ahead");
    }
    const { changes, condition } = checkpointWrite(held, holder, nextOffset, now, {
      targetOffset,
      source,
      producerIds,
    });
    const outcome = await this.#write(held, "checkpoint", changes, condition, BOTH);
    if (outcome.ok) return this.#leaseOf(held, "checkpoint", outcome.item);
    const current = this.#current(held, outcome.current);
    return settleRefusedCheckpoint(held, "checkpoint", current, nextOffset, now);
  }

  /** Moves the checkpoint where the diverged source log must be read from (see LeaseStore). */
  async resetCheckpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    _reason: CheckpointResetReason,
    position: { readonly targetOffset: number | null; readonly source: SourcePosition },
  ): Promise<Lease> {
    requireEpochMs("resetCheckpoint", "now", now);
    const holder = requireHolder(held, "resetCheckpoint");
    const { changes, condition } = resetCheckpointWrite(held, holder, nextOffset, now, position);
    const outcome = await this.#write(held, "resetCheckpoint", changes, condition, BOTH);
    if (outcome.ok) return this.#leaseOf(held, "resetCheckpoint", outcome.item);
    const current = this.#current(held, outcome.current);
    return settleRefusedCheckpoint(held, "resetCheckpoint", current, nextOffset, now);
  }

  async release(held: Lease): Promise<boolean> {
    if (held.owner === null) return false;
    const changes = new ChangeSet()
      .without("owner", "handoffTo")
      .with("expiresAt", 0)
      .with("updatedAt", this.#clock.now());
    const condition = LeaseConditions.release({ owner: held.owner, counter: held.counter });
    return (await this.#write(held, "release", changes, condition, [])).ok;
  }

  async requestHandoff(observed: Lease, requester: string): Promise<boolean> {
    if (observed.owner === null) return false;
    requireWorkerId("requestHandoff", "requester", requester, observed.owner);
    const holding = { owner: observed.owner, counter: observed.counter };
    const changes = new ChangeSet().with("handoffTo", requester).with("updatedAt", this.#clock.now());
    const condition = LeaseConditions.requestHandoff(holding);
    return (await this.#write(observed, "requestHandoff", changes, condition, [])).ok;
  }

  async withdrawHandoff(observed: Lease, requester: string): Promise<boolean> {
    requireWorkerId("withdrawHandoff", "requester", requester);
    if (observed.owner === null || observed.owner === requester || observed.handoffTo !== requester)
      return false;
    const holding = { owner: observed.owner, counter: observed.counter };
    const changes = new ChangeSet().without("handoffTo").with("updatedAt", this.#clock.now());
    const condition = LeaseConditions.withdrawHandoff(holding, requester);
    return (await this.#write(observed, "withdrawHandoff", changes, condition, [])).ok;
  }

  async handOver(held: Lease, expiresAt: number): Promise<boolean> {
    requireEpochMs("handOver", "expiresAt", expiresAt);
    if (held.owner === null || held.handoffTo === null) return false;
    const holding = { owner: held.owner, counter: held.counter };
    // The fresh expiry keeps the lease from looking expired to a third worker before the taker,
    // which learns of it only at its next look at the table, has renewed it once.
    const changes = new ChangeSet()
      .with("owner", held.handoffTo)
      .with("counter", held.counter + 1)
      .with("expiresAt", expiresAt)
      .with("updatedAt", this.#clock.now())
      .without("handoffTo");
    const condition = LeaseConditions.handOver(holding, held.handoffTo);
    return (await this.#write(held, "handOver", changes, condition, [])).ok;
  }

  /**
   * One conditional write on `tp`'s lease item. `returns`: what the caller reads of the answer,
   * the lease as written ("item"), and the item a failed condition saw, to tell why it failed
   * ("current"); the others only learn whether they won the race.
   */
  #write(
    tp: TopicPartition,
    operation: string,
    changes: ChangeSet,
    condition: Condition,
    returns: readonly ("item" | "current")[],
  ): Promise<WriteOutcome> {
    return this.#table.update(partitionKey(tp), changes, {
      operation,
      condition,
      returnItem: returns.includes("item"),
      returnCurrent: returns.includes("current"),
    });
  }

  /** The lease a write returned; a malformed item is LEASE_STORE_INVALID. */
  #leaseOf(tp: TopicPartition, operation: string, item: Item | undefined): Lease {
    const key = partitionKey(tp);
    return leaseOf(key, writtenItem(item, key, operation));
  }

  /** The item a failed condition saw, as a lease; a malformed one is LEASE_STORE_INVALID. */
  #current(tp: TopicPartition, item: Item | undefined): Lease | undefined {
    return item === undefined ? undefined : leaseOf(partitionKey(tp), item);
  }
}
