/**
 * LeaseStore on a DynamoDB table, modelled on the Kinesis Client Library's lease table: one item
 * per source topic-partition (layout in lease-item.ts), an owner, and a counter that is the
 * fencing token. Two rules make it safe with any number of workers and any clock skew between
 * them:
 *   1. Every write that decides ownership or progress is conditional on what the writer saw
 *      (owner and counter), so a worker acting on a stale view fails instead of overwriting.
 *      The conditions, and the race each prevents, are in lease-conditions.ts.
 *   2. The counter grows on every claim, so a holder that lost the lease and got it back (or a
 *      worker id that is reused) can never be mistaken for the holder it used to be.
 * A failed condition is translated here (lease-loss.ts says what it means); every other SDK
 * error goes through translateDynamoDbError. Reads are in lease-reader.ts.
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { systemClock } from "../core/clock.js";
import { forEachLimited } from "../core/lease/for-each-limited.js";
import { partitionKey, type TopicPartition } from "../core/model.js";
import type {
  CheckpointResetReason,
  Clock,
  HeartbeatOptions,
  LeaderLease,
  Lease,
  LeaseStore,
  Logger,
  ReplicationMetrics,
  SourcePosition,
  TableSnapshot,
  WorkerHeartbeat,
  WorkerRecord,
} from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { checkpointUpdate, resetCheckpointUpdate } from "./checkpoint-update.js";
import { leaderFromItem, leaderKey, workerFromItem, workerKey } from "./coordination-item.js";
import { CoordinationStore } from "./coordination-store.js";
import { translateDynamoDbError } from "./errors.js";
import { requireEpochMs, requireOffset, requireWorkerId } from "./lease-arguments.js";
import { LeaseConditions } from "./lease-conditions.js";
import { freeLeaseItem, type Item, keyOf, leaseFromItem } from "./lease-item.js";
import { leaseLost, requireHolder, settleRefusedCheckpoint } from "./lease-loss.js";
import { LeaseReader } from "./lease-reader.js";
import { LeaseUpdate } from "./lease-update.js";

export interface DynamoDbLeaseStoreOptions {
  /** Built once by the caller (cold start), with the timeouts and retries it wants. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * Source of `updatedAt`, which is informational only: no condition ever compares it.
   * @default systemClock
   */
  readonly clock?: Clock;
  /** Told about items `list` skips because they cannot be read as leases. @default silent */
  readonly logger?: Logger;
  /** Counts the items `list` skips. @default none */
  readonly metrics?: Pick<ReplicationMetrics, "leaseItemSkipped">;
}

/** Parallel PutItems in `ensure`: enough to create thousands of leases quickly, few enough not to self-throttle. */
const ENSURE_CONCURRENCY = 16;

/**
 * What a conditional UpdateItem came to; a failed condition is an outcome, not an error. Items
 * are parsed only by the callers that use them (a malformed one is LEASE_STORE_INVALID).
 */
type UpdateOutcome =
  | { readonly ok: true; readonly item: Item }
  /** `current`: the item as DynamoDB saw it when the condition failed, when it was asked for. */
  | { readonly ok: false; readonly current: Item | undefined };

export class DynamoDbLeaseStore implements LeaseStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #clock: Clock;
  readonly #reader: LeaseReader;
  readonly #coordination: CoordinationStore;

  constructor(options: DynamoDbLeaseStoreOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#clock = options.clock ?? systemClock;
    this.#reader = new LeaseReader(options);
    this.#coordination = new CoordinationStore({ ...options, clock: this.#clock });
  }

  async ensure(partitions: readonly TopicPartition[]): Promise<void> {
    const unique = new Map(partitions.map((tp) => [partitionKey(tp), tp]));
    const existing = await this.#reader.existingKeys([...unique.keys()]);
    const missing = [...unique.entries()].filter(([key]) => !existing.has(key)).map(([, tp]) => tp);
    await forEachLimited(missing, ENSURE_CONCURRENCY, (tp) => this.#putIfAbsent(tp));
  }

  list(): Promise<Lease[]> {
    return this.#reader.list();
  }

  async lease(tp: TopicPartition): Promise<Lease | null> {
    const item = await this.#reader.getItem(keyOf(tp), true);
    return item === undefined ? null : leaseFromItem(item);
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

  async worker(workerId: string): Promise<WorkerRecord | null> {
    requireWorkerId("worker", "workerId", workerId);
    const item = await this.#reader.getItem(workerKey(workerId), false);
    return item === undefined ? null : workerFromItem(item);
  }

  async leader(): Promise<LeaderLease | null> {
    const item = await this.#reader.getItem(leaderKey, false);
    return item === undefined ? null : leaderFromItem(item);
  }

  claimLeader(observed: LeaderLease | null, owner: string, expiresAt: number): Promise<LeaderLease | null> {
    return this.#coordination.claimLeader(observed, owner, expiresAt);
  }

  async claim(observed: Lease, owner: string, expiresAt: number): Promise<Lease | null> {
    requireEpochMs("claim", "expiresAt", expiresAt);
    requireWorkerId("claim", "owner", owner);
    // A handoff request is addressed to the previous holder; the new one starts without it.
    const update = new LeaseUpdate(LeaseConditions.claim(observed))
      .set("owner", owner)
      .set("counter", observed.counter + 1)
      .set("expiresAt", expiresAt)
      .set("updatedAt", this.#clock.now())
      .remove("handoffTo");
    const outcome = await this.#update(observed, "claim", update, { current: false });
    return outcome.ok ? leaseFromItem(outcome.item) : null;
  }

  async renew(held: Lease, expiresAt: number): Promise<Lease> {
    requireEpochMs("renew", "expiresAt", expiresAt);
    const holder = requireHolder(held, "renew");
    const update = new LeaseUpdate(LeaseConditions.renew(holder))
      .set("expiresAt", expiresAt)
      .set("updatedAt", this.#clock.now());
    const outcome = await this.#update(held, "renew", update);
    if (!outcome.ok) throw leaseLost(held, "renew", currentLease(outcome.current), null);
    return leaseFromItem(outcome.item);
  }

  /**
   * Throws LEASE_LOST both when the lease is no longer ours and when `nextOffset` is behind the
   * stored checkpoint (details.reason "checkpoint-ahead"). Under the same owner and counter only
   * this holder ever wrote the checkpoint, so a stored value ahead of ours means our view of the
   * lease is not the truth any more (a delayed duplicate write, or a second loop on the same
   * lease): the only safe reaction is the one LEASE_LOST already triggers, stop the partition
   * and let the next claim resume from what is stored. A retryable error would loop forever.
   * Writing the same checkpoint again succeeds and changes nothing but `updatedAt` (and the
   * target position, when one is given), which makes an SDK retry of a write that did land
   * harmless.
   */
  async checkpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    targetOffset?: number,
    source?: SourcePosition,
  ): Promise<Lease> {
    requireOffset("checkpoint", "nextOffset", nextOffset);
    if (targetOffset !== undefined) requireOffset("checkpoint", "targetOffset", targetOffset);
    requireEpochMs("checkpoint", "now", now);
    const holder = requireHolder(held, "checkpoint");
    if (held.checkpoint !== null && nextOffset < held.checkpoint) {
      throw leaseLost(held, "checkpoint", undefined, nextOffset, "checkpoint-ahead");
    }
    const update = checkpointUpdate(held, holder, nextOffset, now, { targetOffset, source });
    const outcome = await this.#update(held, "checkpoint", update);
    if (outcome.ok) return leaseFromItem(outcome.item);
    return settleRefusedCheckpoint(held, "checkpoint", currentLease(outcome.current), nextOffset, now);
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
    const update = resetCheckpointUpdate(held, holder, nextOffset, now, position);
    const outcome = await this.#update(held, "resetCheckpoint", update);
    if (outcome.ok) return leaseFromItem(outcome.item);
    return settleRefusedCheckpoint(held, "resetCheckpoint", currentLease(outcome.current), nextOffset, now);
  }

  async release(held: Lease): Promise<boolean> {
    if (held.owner === null) return false;
    const update = new LeaseUpdate(LeaseConditions.release({ owner: held.owner, counter: held.counter }))
      .remove("owner", "handoffTo")
      .set("expiresAt", 0)
      .set("updatedAt", this.#clock.now());
    return (await this.#update(held, "release", update)).ok;
  }

  async requestHandoff(observed: Lease, requester: string): Promise<boolean> {
    if (observed.owner === null) return false;
    requireWorkerId("requestHandoff", "requester", requester, observed.owner);
    const holding = { owner: observed.owner, counter: observed.counter };
    const update = new LeaseUpdate(LeaseConditions.requestHandoff(holding))
      .set("handoffTo", requester)
      .set("updatedAt", this.#clock.now());
    return (await this.#update(observed, "requestHandoff", update, { current: false })).ok;
  }

  async handOver(held: Lease, expiresAt: number): Promise<boolean> {
    requireEpochMs("handOver", "expiresAt", expiresAt);
    if (held.owner === null || held.handoffTo === null) return false;
    const holding = { owner: held.owner, counter: held.counter };
    // The fresh expiry keeps the lease from looking expired to a third worker before the taker,
    // which learns of it only at its next look at the table, has renewed it once.
    const update = new LeaseUpdate(LeaseConditions.handOver(holding, held.handoffTo))
      .set("owner", held.handoffTo)
      .set("counter", held.counter + 1)
      .set("expiresAt", expiresAt)
      .set("updatedAt", this.#clock.now())
      .remove("handoffTo");
    return (await this.#update(held, "handOver", update, { current: false })).ok;
  }

  async #putIfAbsent(tp: TopicPartition): Promise<void> {
    const condition = LeaseConditions.create();
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: freeLeaseItem(tp, this.#clock.now()),
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: condition.names,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return; // another worker created it
      throw translateDynamoDbError(error, "PutItem", this.#tableName, { leaseKey: partitionKey(tp) });
    }
  }

  /**
   * One conditional UpdateItem on `tp`'s item. `current: false` when the caller does not need the
   * item a failed condition saw (it only learns that it lost the race).
   */
  async #update(
    tp: TopicPartition,
    operation: string,
    update: LeaseUpdate,
    { current = true }: { readonly current?: boolean } = {},
  ): Promise<UpdateOutcome> {
    let attributes: Item | undefined;
    try {
      const out = await this.#client.send(
        new UpdateItemCommand({
          ...update.build(),
          TableName: this.#tableName,
          Key: keyOf(tp),
          ReturnValues: "ALL_NEW",
          ...(current ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" } : {}),
        }),
      );
      attributes = out.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        return { ok: false, current: error.Item };
      }
      throw translateDynamoDbError(error, `UpdateItem (${operation})`, this.#tableName, {
        leaseKey: partitionKey(tp),
      });
    }
    if (attributes === undefined) {
      throw new ReplicatorError(
        "LEASE_STORE_INVALID",
        `UpdateItem on ${partitionKey(tp)} returned no attributes`,
        {
          details: { leaseKey: partitionKey(tp), operation },
        },
      );
    }
    return { ok: true, item: attributes };
  }
}

/** The item a failed condition saw, as a lease; a malformed one is LEASE_STORE_INVALID. */
function currentLease(item: Item | undefined): Lease | undefined {
  return item === undefined ? undefined : leaseFromItem(item);
}
