/**
 * The lease protocol's bookkeeping writes on DynamoDB (item layout in coordination-item.ts,
 * conditions in lease-conditions.ts' CoordinationConditions): a worker's heartbeat, the leader's
 * assignments, deleting long-dead worker items, and the leader item. None decides ownership of a
 * partition; that stays with the lease items' fenced writes (lease-store.ts).
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { Clock, HeartbeatOptions, LeaderLease, WorkerHeartbeat, WorkerRecord } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import type { Condition } from "./condition.js";
import {
  assignmentValue,
  heartbeatRemoves,
  heartbeatValues,
  LEADER_KEY,
  leaderFromItem,
  leaderKey,
  workerFromItem,
  workerKey,
} from "./coordination-item.js";
import { translateDynamoDbError } from "./errors.js";
import { requireEpochMs, requireWorkerId } from "./lease-arguments.js";
import { CoordinationConditions } from "./lease-conditions.js";
import { Attr, type Item, num } from "./lease-item.js";

export class CoordinationStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #clock: Clock;

  constructor(options: { client: DynamoDBClient; tableName: string; clock: Clock }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#clock = options.clock;
  }

  /** Unconditional: a worker's own item is written by that worker only (and the leader's assignment, apart). */
  async heartbeat(beat: WorkerHeartbeat, options: HeartbeatOptions = {}): Promise<WorkerRecord> {
    requireWorkerId("heartbeat", "workerId", beat.workerId);
    requireWorkerId("heartbeat", "slot", beat.slot);
    for (const field of ["startedAt", "deadline", "expiresAt"] as const)
      requireEpochMs("heartbeat", field, beat[field]);
    for (const [key, until] of beat.backoff ?? []) requireEpochMs("heartbeat", `backoff[${key}]`, until);
    const values = { ...heartbeatValues(beat), [Attr.updatedAt]: num(this.#clock.now()) };
    const remove = [
      ...heartbeatRemoves(beat),
      ...(options.forgetAssignment === true ? [Attr.assignment] : []),
    ];
    const item = await this.#update(workerKey(beat.workerId), "heartbeat", values, null, remove);
    if (item === null) throw new ReplicatorError("LEASE_STORE_INVALID", "heartbeat returned no item");
    return workerFromItem(item);
  }

  async assign(workerId: string, assignment: readonly string[]): Promise<boolean> {
    requireWorkerId("assign", "workerId", workerId);
    const values = {
      [Attr.assignment]: assignmentValue(assignment),
      [Attr.updatedAt]: num(this.#clock.now()),
    };
    const item = await this.#update(
      workerKey(workerId),
      "assign",
      values,
      CoordinationConditions.assign(workerId),
    );
    return item !== null;
  }

  async removeWorker(observed: WorkerRecord): Promise<boolean> {
    const condition = CoordinationConditions.removeWorker(observed.expiresAt);
    try {
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: workerKey(observed.workerId),
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: { ...condition.names },
          ExpressionAttributeValues: { ...condition.values },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw translateDynamoDbError(error, "DeleteItem (removeWorker)", this.#tableName, {
        leaseKey: workerKey(observed.workerId)[Attr.key]?.S,
      });
    }
  }

  async claimLeader(
    observed: LeaderLease | null,
    owner: string,
    expiresAt: number,
  ): Promise<LeaderLease | null> {
    requireWorkerId("claimLeader", "owner", owner);
    requireEpochMs("claimLeader", "expiresAt", expiresAt);
    const next: LeaderLease = { owner, counter: (observed?.counter ?? 0) + 1, expiresAt };
    const values = {
      [Attr.owner]: { S: owner },
      [Attr.counter]: num(Math.max(next.counter, 1)),
      [Attr.expiresAt]: num(expiresAt),
      [Attr.updatedAt]: num(this.#clock.now()),
    };
    // A leader item nobody can read (counter -1, see leaderFromItem) would refuse every
    // condition forever: it is replaced outright. Leadership decides no ownership, so two
    // workers replacing it at once cost at most one round of two leaders.
    if (observed !== null && observed.counter < 0) return this.#replaceLeader(values);
    const item = await this.#update(
      leaderKey,
      "claimLeader",
      values,
      CoordinationConditions.claimLeader(observed),
    );
    return item === null ? null : leaderFromItem(item);
  }

  async #replaceLeader(values: Record<string, AttributeValue>): Promise<LeaderLease> {
    try {
      await this.#client.send(
        new PutItemCommand({ TableName: this.#tableName, Item: { ...leaderKey, ...values } }),
      );
    } catch (error) {
      throw translateDynamoDbError(error, "PutItem (claimLeader)", this.#tableName, { leaseKey: LEADER_KEY });
    }
    return leaderFromItem(values);
  }

  /** SET `values` on `key`'s item under `condition`; the new item, or null when the condition failed. */
  async #update(
    key: Item,
    operation: string,
    values: Record<string, AttributeValue>,
    condition: Condition | null,
    remove: readonly string[] = [],
  ): Promise<Item | null> {
    const attrs = Object.keys(values);
    const removal = remove.length === 0 ? "" : ` REMOVE ${remove.map((a) => `#r_${a}`).join(", ")}`;
    try {
      const out = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: key,
          UpdateExpression: `SET ${attrs.map((a) => `#v_${a} = :v_${a}`).join(", ")}${removal}`,
          ...(condition === null ? {} : { ConditionExpression: condition.expression }),
          ExpressionAttributeNames: {
            ...(condition?.names ?? {}),
            ...Object.fromEntries(attrs.map((a) => [`#v_${a}`, a])),
            ...Object.fromEntries(remove.map((a) => [`#r_${a}`, a])),
          },
          ExpressionAttributeValues: {
            ...(condition?.values ?? {}),
            ...Object.fromEntries(attrs.map((a) => [`:v_${a}`, values[a] as AttributeValue])),
          },
          ReturnValues: "ALL_NEW",
        }),
      );
      return out.Attributes ?? null;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return null;
      throw translateDynamoDbError(error, `UpdateItem (${operation})`, this.#tableName, {
        leaseKey: key[Attr.key]?.S,
      });
    }
  }
}
