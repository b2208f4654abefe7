/**
 * LeaseStore on a DynamoDB table, modelled on the Kinesis Client Library's lease table: one item
 * per source topic-partition (layout in lease-item.ts), an owner, and a counter that is the
 * fencing token. Two rules make it safe with any number of workers and any clock skew between
 * them:
 *   1. Every write that decides ownership or progress is conditional on what the writer saw
 *      (owner and counter), so a worker acting on a stale view fails instead of overwriting.
 *   2. The counter grows on every claim, so a holder that lost the lease and got it back (or a
 *      worker id that is reused) can never be mistaken for the holder it used to be.
 * A failed condition is translated here; every other SDK error goes through translateDynamoDbError.
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  type ScanCommandOutput,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { partitionKey, type TopicPartition } from "../core/model.js";
import type {
  CheckpointResetReason,
  Lease,
  LeaseStore,
  Logger,
  ReplicationMetrics,
  SourcePosition,
} from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { resetCheckpointInput, sourcePositionParts } from "./checkpoint-reset.js";
import { translateDynamoDbError } from "./errors.js";
import {
  Attr,
  expressionNames,
  freeLeaseItem,
  HOLDING,
  HOLDING_UNEXPIRED,
  type Item,
  keyOf,
  leaseFromItem,
  num,
  readLeaseItem,
  type UnreadableItem,
} from "./lease-item.js";

export interface DynamoDbLeaseStoreOptions {
  /** Built once by the caller (cold start), with the timeouts and retries it wants. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * Source of `updatedAt`, which is informational only: no condition ever compares it.
   * @default Date.now
   */
  readonly now?: () => number;
  /** Told about items `list` skips because they cannot be read as leases. @default silent */
  readonly logger?: Logger;
  /** Counts the items `list` skips. @default none */
  readonly metrics?: Pick<ReplicationMetrics, "leaseItemSkipped">;
}

/** Distinct skipped items a store warns about; the metric still counts every one. */
const MAX_SKIP_WARNINGS = 100;

/** BatchGetItem's limit per request. */
const BATCH_GET_MAX_KEYS = 100;
/** Parallel PutItems in `ensure`: enough to create thousands of leases quickly, few enough not to self-throttle. */
const ENSURE_CONCURRENCY = 16;

/** Why a conditional write on a held lease failed, read from the item DynamoDB returned. */
type LossReason = "missing" | "released" | "taken" | "expired" | "checkpoint-ahead";

type UpdateOutcome =
  | { readonly ok: true; readonly item: Item }
  | { readonly ok: false; readonly current?: Item };

export class DynamoDbLeaseStore implements LeaseStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #metrics: Pick<ReplicationMetrics, "leaseItemSkipped"> | undefined;
  /** Skipped items already warned about (key and attribute). */
  readonly #warned = new Set<string>();

  constructor(options: DynamoDbLeaseStoreOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#now = options.now ?? Date.now;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
  }

  async ensure(partitions: readonly TopicPartition[]): Promise<void> {
    const unique = new Map(partitions.map((tp) => [partitionKey(tp), tp]));
    const existing = await this.#existingKeys([...unique.keys()]);
    const missing = [...unique.entries()].filter(([key]) => !existing.has(key)).map(([, tp]) => tp);
    await forEachLimited(missing, ENSURE_CONCURRENCY, (tp) => this.#putIfAbsent(tp));
  }

  async list(): Promise<Lease[]> {
    const leases: Lease[] = [];
    let startKey: Item | undefined;
    do {
      let page: ScanCommandOutput;
      try {
        page = await this.#client.send(
          new ScanCommand({
            TableName: this.#tableName,
            // A claim decided on an eventually consistent read would be refused anyway (the
            // counter moved), but every such miss costs a write and a lease-balancing round.
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        );
      } catch (error) {
        throw translateDynamoDbError(error, "Scan", this.#tableName);
      }
      for (const item of page.Items ?? []) {
        const read = readLeaseItem(item);
        if ("lease" in read) leases.push(read.lease);
        else this.#skipped(read.unreadable);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return leases;
  }

  /**
   * An item list() cannot read is left alone (never overwritten: it may be another app's, or a
   * lease a newer version wrote) and reported: its key and the attribute at fault, no values.
   */
  #skipped(item: UnreadableItem): void {
    this.#metrics?.leaseItemSkipped?.({ leaseKey: item.leaseKey, attribute: item.attribute });
    // Every rebalance scans the table: warn once per item and process (bounded), count every time.
    const seen = `${item.leaseKey}\u0000${item.attribute}`;
    if (this.#warned.has(seen) || this.#warned.size >= MAX_SKIP_WARNINGS) return;
    this.#warned.add(seen);
    this.#logger?.warn("lease table item skipped: not a lease this version can read", {
      tableName: this.#tableName,
      leaseKey: item.leaseKey,
      attribute: item.attribute,
      hint: "its partition is not copied until the item is fixed or removed",
    });
  }

  async claim(observed: Lease, owner: string, expiresAt: number): Promise<Lease | null> {
    assertEpochMs(expiresAt, "expiresAt");
    if (owner === "") throw new RangeError("claim: owner must be a non-empty worker id");
    // The claim succeeds only if the item is exactly as the claimer saw it. Timelines it prevents:
    //   t0  A and B both list: lease free (or expired), counter 7
    //   t1  A claims: condition holds, owner A, counter 8
    //   t2  B claims: without a condition B would overwrite A, and both would copy the partition
    //       (A believing its counter 8 is current). With it, counter 8 != 7 and B gets null.
    // And the late renewal, which owner and counter alone do not catch (renew keeps both):
    //   t0  A holds counter 8, expiry E1; A sends a renewal that is slow to arrive
    //   t1  B lists after E1: the lease looks expired
    //   t2  A's renewal lands: expiry E2, and A, told so, keeps writing until E2
    //   t3  B claims: owner and counter are as B saw them, so B would hold it too, and both
    //       would write. The expiry B saw (E1) is no longer the item's (E2): B gets null.
    // The counter check also fails on a missing item, so a claim never creates a lease.
    const observedOwner =
      observed.owner === null ? "attribute_not_exists(#owner)" : "#owner = :observedOwner";
    const outcome = await this.#update(
      observed,
      "claim",
      {
        // A handoff request is addressed to the previous holder; the new one starts without it.
        UpdateExpression:
          "SET #owner = :owner, #counter = :nextCounter, #expiresAt = :expiresAt, #updatedAt = :now REMOVE #handoffTo",
        ConditionExpression: `${observedOwner} AND #counter = :observedCounter AND #expiresAt = :observedExpiresAt`,
        ExpressionAttributeNames: expressionNames("owner", "counter", "expiresAt", "updatedAt", "handoffTo"),
        ExpressionAttributeValues: {
          ":owner": { S: owner },
          ":nextCounter": num(observed.counter + 1),
          ":observedCounter": num(observed.counter),
          ":observedExpiresAt": num(observed.expiresAt),
          ":expiresAt": num(expiresAt),
          ":now": num(this.#now()),
          ...(observed.owner === null ? {} : { ":observedOwner": { S: observed.owner } }),
        },
      },
      false,
    );
    return outcome.ok ? leaseFromItem(outcome.item) : null;
  }

  async renew(held: Lease, expiresAt: number): Promise<Lease> {
    assertEpochMs(expiresAt, "expiresAt");
    const holder = requireHolder(held, "renew");
    // Renewal must not resurrect a lease someone else took. Timeline it prevents:
    //   t0  A holds counter 8 and stalls (GC pause, slow network) past expiresAt
    //   t1  B claims the expired lease: owner B, counter 9
    //   t2  A wakes and renews: unconditionally it would push B's expiry as if A still held it,
    //       or (writing owner) take it back behind B's back. The counter check refuses A.
    // Like the KCL, an expired lease that nobody took yet may still be renewed by its holder:
    // nobody else has acted on it, and a claimer that saw it expired is conditional on the
    // expiry it saw, which this renewal changes (see claim).
    const outcome = await this.#update(held, "renew", {
      UpdateExpression: "SET #expiresAt = :expiresAt, #updatedAt = :now",
      ConditionExpression: HOLDING,
      ExpressionAttributeNames: expressionNames("owner", "counter", "expiresAt", "updatedAt"),
      ExpressionAttributeValues: {
        ":owner": { S: holder },
        ":counter": num(held.counter),
        ":expiresAt": num(expiresAt),
        ":now": num(this.#now()),
      },
    });
    if (!outcome.ok) throw this.#lost(held, "renew", currentLease(outcome), null);
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
    if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
      throw new RangeError(`checkpoint: nextOffset must be a non-negative safe integer, got ${nextOffset}`);
    }
    if (targetOffset !== undefined && (!Number.isSafeInteger(targetOffset) || targetOffset < 0)) {
      throw new RangeError(
        `checkpoint: targetOffset must be a non-negative safe integer, got ${targetOffset}`,
      );
    }
    assertEpochMs(now, "now");
    const holder = requireHolder(held, "checkpoint");
    if (held.checkpoint !== null && nextOffset < held.checkpoint) {
      throw this.#lost(held, "checkpoint", undefined, nextOffset, "checkpoint-ahead");
    }
    const advances = held.checkpoint === null || nextOffset > held.checkpoint;
    // Progress is recorded only by the current holder, before its lease runs out. Timeline:
    //   t0  A holds counter 8, copies 100..199; its checkpoint request is delayed (GC, network)
    //   t1  A's lease expires; B claims it (counter 9) and resumes from checkpoint 100
    //   t2  B copies 100..149 and checkpoints 150
    //   t3  A's checkpoint 200 arrives: unconditionally, the item would mix two writers' progress,
    //       and B's next checkpoint (180) would rewind it or be refused; if A is a zombie whose
    //       writes the target fenced, 150..199 would be recorded as copied when they were not.
    // The owner/counter check refuses A at t3; `#expiresAt > :now` refuses it already between t1
    // and B's claim, because once expired anyone may be reading the stored checkpoint to resume.
    // `now` is the caller's clock, so a holder whose clock runs late gets a little grace; the
    // counter still fences it the moment anyone claims.
    // The checkpoint bound refuses a move backwards: a late duplicate of an older write (an SDK
    // retry whose first attempt landed after a newer one) would otherwise rewind the partition
    // and make the next holder copy records the target already has.
    const checkpointBound = advances
      ? "(attribute_not_exists(#checkpoint) OR #checkpoint < :offset)"
      : "#checkpoint = :offset";
    // The target position travels in the same conditional write as the checkpoint it belongs to:
    // stored apart, a crash between the two writes would pair a checkpoint with a position from
    // another batch, and a position later than a landed write would hide that write from the
    // next holder, which would copy it again.
    // A checkpoint that stays put may still bring a position (a lease from before exactly-once
    // mode, or a pin retried): any position the holder observed is a valid one for it.
    const withTarget = targetOffset !== undefined;
    // Which source log the checkpoint belongs to rides in the same write, for the same reason:
    // paired with another batch's epoch, a truncation check on resume would compare wrong values.
    const sourceParts = sourcePositionParts(source);
    const setTarget = `${withTarget ? ", #targetOffset = :targetOffset" : ""}${sourceParts.set}`;
    const outcome = await this.#update(held, "checkpoint", {
      // lastProgressAt moves only with the checkpoint: it is how stalled partitions are found.
      UpdateExpression: advances
        ? `SET #checkpoint = :offset, #lastProgressAt = :now, #updatedAt = :now${setTarget}`
        : `SET #updatedAt = :now${setTarget}`,
      ConditionExpression: `${HOLDING_UNEXPIRED} AND ${checkpointBound}`,
      // DynamoDB rejects names the expressions do not use, so lastProgressAt only when it is set.
      ExpressionAttributeNames: expressionNames(
        "owner",
        "counter",
        "expiresAt",
        "checkpoint",
        "updatedAt",
        ...(advances ? (["lastProgressAt"] as const) : []),
        ...(withTarget ? (["targetOffset"] as const) : []),
        ...sourceParts.names,
      ),
      ExpressionAttributeValues: {
        ":owner": { S: holder },
        ":counter": num(held.counter),
        ":now": num(now),
        ":offset": num(nextOffset),
        ...(withTarget ? { ":targetOffset": num(targetOffset) } : {}),
        ...sourceParts.values,
      },
    });
    if (outcome.ok) return leaseFromItem(outcome.item);
    const current = currentLease(outcome);
    if (current !== undefined && this.#lossReason(held, current, now) === null) {
      // Still ours, so the checkpoint bound failed: equal means our own earlier attempt landed.
      if (current.checkpoint === nextOffset) return current;
      throw this.#lost(held, "checkpoint", current, nextOffset, "checkpoint-ahead");
    }
    throw this.#lost(held, "checkpoint", current, nextOffset);
  }

  /**
   * Moves the checkpoint where the diverged source log must be read from (see
   * LeaseStore.resetCheckpoint); checkpoint() refuses that on purpose. Timeline it is fenced
   * against:
   *   t0  A holds counter 8 at checkpoint 500, finds the topic re-created, decides to reset to 0
   *   t1  A stalls (GC); its lease expires; B claims (counter 9), makes the same finding, resets
   *       to 0 and copies 0..199, checkpoint 200
   *   t2  A's reset lands: unconditionally it would rewind B to 0 and 0..199 would be copied twice
   * Owner, counter and expiry refuse A at t2, as for checkpoint(); `#checkpoint = :from` also
   * refuses a reset decided on a checkpoint that is not the stored one any more (a late duplicate
   * of an older write of our own).
   */
  async resetCheckpoint(
    held: Lease,
    nextOffset: number,
    now: number,
    reason: CheckpointResetReason,
    position: { readonly targetOffset: number | null; readonly source: SourcePosition },
  ): Promise<Lease> {
    assertEpochMs(now, "now");
    const holder = requireHolder(held, "resetCheckpoint");
    const input = resetCheckpointInput(held, holder, nextOffset, now, reason, position);
    const outcome = await this.#update(held, "resetCheckpoint", input);
    if (outcome.ok) return leaseFromItem(outcome.item);
    const current = currentLease(outcome);
    if (current !== undefined && this.#lossReason(held, current, now) === null) {
      // Still ours: our own earlier attempt landed, or the stored checkpoint moved since `held`.
      if (current.checkpoint === nextOffset) return current;
      throw this.#lost(held, "resetCheckpoint", current, nextOffset, "checkpoint-ahead");
    }
    throw this.#lost(held, "resetCheckpoint", current, nextOffset);
  }

  async release(held: Lease): Promise<boolean> {
    if (held.owner === null) return false;
    // Only the holder may free the lease. Timeline it prevents:
    //   t0  A holds counter 8, stalls past expiry; B claims (counter 9)
    //   t1  A shuts down and releases: unconditionally it would free B's lease, and a third
    //       worker C would claim and copy the partition alongside B.
    // The counter is not bumped: the next claim bumps it, and a stale holder's owner check
    // already fails against the absent owner.
    const outcome = await this.#update(held, "release", {
      UpdateExpression: "REMOVE #owner, #handoffTo SET #expiresAt = :zero, #updatedAt = :now",
      ConditionExpression: HOLDING,
      ExpressionAttributeNames: expressionNames("owner", "counter", "expiresAt", "updatedAt", "handoffTo"),
      ExpressionAttributeValues: {
        ":owner": { S: held.owner },
        ":counter": num(held.counter),
        ":zero": num(0),
        ":now": num(this.#now()),
      },
    });
    return outcome.ok;
  }

  async requestHandoff(observed: Lease, requester: string): Promise<boolean> {
    if (observed.owner === null) return false;
    if (requester === "" || requester === observed.owner) {
      throw new RangeError("requestHandoff: requester must be a non-empty worker id other than the owner");
    }
    // The request is only a flag; ownership changes later by the holder's release and an
    // ordinary claim, both fenced by the counter. The condition makes sure the flag lands on the
    // holding we judged overloaded. Timeline it prevents:
    //   t0  B lists: A holds the lease, counter 8, A has too many leases
    //   t1  A releases; C claims (counter 9)
    //   t2  B's request would land on C, who may hold only its fair share, and C would give the
    //       lease up for nothing. With `#counter = :counter` it lands only on A's term.
    // `attribute_not_exists(#handoffTo)` keeps two requesters from overwriting each other's
    // request, so one holder is asked once, not once per newcomer.
    const outcome = await this.#update(
      observed,
      "requestHandoff",
      {
        UpdateExpression: "SET #handoffTo = :requester, #updatedAt = :now",
        ConditionExpression: `${HOLDING} AND attribute_not_exists(#handoffTo)`,
        ExpressionAttributeNames: expressionNames("owner", "counter", "handoffTo", "updatedAt"),
        ExpressionAttributeValues: {
          ":owner": { S: observed.owner },
          ":counter": num(observed.counter),
          ":requester": { S: requester },
          ":now": num(this.#now()),
        },
      },
      false,
    );
    return outcome.ok;
  }

  async handOver(held: Lease, expiresAt: number): Promise<boolean> {
    assertEpochMs(expiresAt, "expiresAt");
    if (held.owner === null || held.handoffTo === null) return false;
    // Ownership moves from holder to asker in one conditional write. Timeline it prevents:
    //   t0  A holds counter 8, B asked for it; A finishes its batch and checkpoints
    //   t1  A's lease expires while A is slow; C claims it (counter 9)
    //   t2  A hands over: unconditionally B and C would both copy the partition.
    // The owner/counter check refuses A at t2. The new counter fences A's later writes, and
    // `#handoffTo = :to` makes sure the lease goes to the worker that asked, not a stale asker.
    // The fresh expiry keeps the lease from looking expired to a third worker before B, which
    // learns of it only at its next look at the table, has renewed it once.
    const outcome = await this.#update(
      held,
      "handOver",
      {
        UpdateExpression:
          "SET #owner = :to, #counter = :nextCounter, #expiresAt = :expiresAt, #updatedAt = :now REMOVE #handoffTo",
        ConditionExpression: `${HOLDING} AND #handoffTo = :to`,
        ExpressionAttributeNames: expressionNames("owner", "counter", "handoffTo", "expiresAt", "updatedAt"),
        ExpressionAttributeValues: {
          ":owner": { S: held.owner },
          ":counter": num(held.counter),
          ":nextCounter": num(held.counter + 1),
          ":to": { S: held.handoffTo },
          ":expiresAt": num(expiresAt),
          ":now": num(this.#now()),
        },
      },
      false,
    );
    return outcome.ok;
  }

  async #existingKeys(keys: readonly string[]): Promise<Set<string>> {
    const existing = new Set<string>();
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX_KEYS) {
      const chunk = keys.slice(i, i + BATCH_GET_MAX_KEYS);
      let found: Item[];
      try {
        const out = await this.#client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [this.#tableName]: {
                Keys: chunk.map((key) => ({ [Attr.key]: { S: key } })),
                ConsistentRead: true,
                ProjectionExpression: "#key",
                ExpressionAttributeNames: { "#key": Attr.key },
              },
            },
          }),
        );
        found = out.Responses?.[this.#tableName] ?? [];
      } catch (error) {
        throw translateDynamoDbError(error, "BatchGetItem", this.#tableName, { keys: chunk.length });
      }
      // Keys DynamoDB left unprocessed simply count as missing: the put that follows is
      // conditional, so treating an existing lease as missing costs one refused write, nothing more.
      for (const item of found) {
        const key = item[Attr.key]?.S;
        if (key !== undefined) existing.add(key);
      }
    }
    return existing;
  }

  async #putIfAbsent(tp: TopicPartition): Promise<void> {
    try {
      // Put only if absent. Timeline it prevents: worker A has held the lease and checkpointed
      // offset 5000 when worker B (cold start, same partition list) runs ensure; a plain put would
      // replace A's item with a free one, dropping owner, counter and checkpoint, and the
      // partition would restart from its policy start offset while A keeps copying.
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: freeLeaseItem(tp, this.#now()),
          ConditionExpression: "attribute_not_exists(#key)",
          ExpressionAttributeNames: { "#key": Attr.key },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return; // another worker created it
      throw translateDynamoDbError(error, "PutItem", this.#tableName, { leaseKey: partitionKey(tp) });
    }
  }

  /** One conditional UpdateItem on `tp`'s item; a failed condition is an outcome, not an error. */
  async #update(
    tp: TopicPartition,
    operation: string,
    input: Omit<UpdateItemCommandInput, "TableName" | "Key">,
    wantCurrent = true,
  ): Promise<UpdateOutcome> {
    try {
      const out = await this.#client.send(
        new UpdateItemCommand({
          ...input,
          TableName: this.#tableName,
          Key: keyOf(tp),
          ReturnValues: "ALL_NEW",
          ...(wantCurrent ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" } : {}),
        }),
      );
      if (out.Attributes === undefined) {
        throw new ReplicatorError(
          "LEASE_STORE_INVALID",
          `UpdateItem on ${partitionKey(tp)} returned no attributes`,
          {
            details: { leaseKey: partitionKey(tp), operation },
          },
        );
      }
      return { ok: true, item: out.Attributes };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        return error.Item === undefined ? { ok: false } : { ok: false, current: error.Item };
      }
      if (error instanceof ReplicatorError) throw error;
      throw translateDynamoDbError(error, `UpdateItem (${operation})`, this.#tableName, {
        leaseKey: partitionKey(tp),
      });
    }
  }

  /** Null when `current` is still held by `held`'s owner and counter (and unexpired at `now`). */
  #lossReason(held: Lease, current: Lease | undefined, now: number | null): LossReason | null {
    if (current === undefined) return "missing";
    if (current.counter !== held.counter) return "taken";
    if (current.owner === null) return "released";
    if (current.owner !== held.owner) return "taken";
    if (now !== null && current.expiresAt <= now) return "expired";
    return null;
  }

  #lost(
    held: Lease,
    operation: string,
    current: Lease | undefined,
    nextOffset: number | null,
    reason?: LossReason,
  ): ReplicatorError {
    // Without a current item to compare, the condition can only have failed on expiry.
    const why = reason ?? this.#lossReason(held, current, null) ?? "expired";
    return new ReplicatorError(
      "LEASE_LOST",
      `${operation} refused: lease ${partitionKey(held)} (owner ${held.owner}, counter ${held.counter}) is ${why}`,
      {
        details: {
          topic: held.topic,
          partition: held.partition,
          owner: held.owner,
          counter: held.counter,
          reason: why,
          ...(nextOffset === null ? {} : { nextOffset }),
          ...(current === undefined
            ? {}
            : {
                currentOwner: current.owner,
                currentCounter: current.counter,
                currentExpiresAt: current.expiresAt,
                currentCheckpoint: current.checkpoint,
              }),
        },
      },
    );
  }
}

/** The item as DynamoDB saw it when the condition failed; a malformed one is LEASE_STORE_INVALID. */
function currentLease(outcome: UpdateOutcome): Lease | undefined {
  return outcome.ok || outcome.current === undefined ? undefined : leaseFromItem(outcome.current);
}

function requireHolder(held: Lease, operation: string): string {
  if (held.owner === null) {
    throw new ReplicatorError(
      "LEASE_LOST",
      `${operation} refused: lease ${partitionKey(held)} has no owner`,
      {
        details: { topic: held.topic, partition: held.partition, counter: held.counter, reason: "released" },
      },
    );
  }
  return held.owner;
}

function assertEpochMs(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer epoch ms, got ${value}`);
  }
}

/** Runs `run` over `items`, at most `limit` at a time; stops taking new items after a failure. */
async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next];
      next += 1;
      if (item === undefined) continue;
      try {
        await run(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
