/**
 * Every lease-store condition (lib/core/lease/conditions.ts) decides in memory exactly what
 * DynamoDB Local decides on the same item. The in-memory table and the loss diagnosis rely on
 * that agreement, so it is checked on a matrix of stored items (a missing one included) and
 * conditions, not assumed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DeleteItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { LeaseConditions } from "../../../lib/core/lease/conditions.js";
import { holds } from "../../../lib/core/lease/memory-table.js";
import type { Condition } from "../../../lib/core/lease/model.js";
import { ChangeSet, type Item as StoredItem } from "../../../lib/core/lease/table.js";
import type { Lease } from "../../../lib/core/ports.js";
import { freeLeaseItem, type Item, keyOf, num } from "../../../lib/dynamodb/lease-item.js";
import { DynamoDbLeaseTable } from "../../../lib/dynamodb/lease-table-port.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { leaseOf } from "../../helpers/fakes.js";

const TP = { topic: "orders", partition: 3 };

/** Stored items: held by A (with and without a checkpoint or handoff request), free, taken by B. */
const STORED = {
  heldByA: leaseOf(TP, { owner: "a", counter: 5, expiresAt: 1_000, checkpoint: 50, handoffTo: "b" }),
  heldByAFresh: leaseOf(TP, { owner: "a", counter: 5, expiresAt: 1_000 }),
  free: leaseOf(TP, { counter: 5 }),
  takenByB: leaseOf(TP, { owner: "b", counter: 6, expiresAt: 2_000, checkpoint: 70 }),
} satisfies Record<string, Lease>;

function itemOf(lease: Lease): Item {
  const item: Item = {
    ...freeLeaseItem(lease, 1),
    counter: num(lease.counter),
    expiresAt: num(lease.expiresAt),
  };
  if (lease.owner !== null) item.owner = { S: lease.owner };
  if (lease.checkpoint !== null) item.checkpoint = num(lease.checkpoint);
  if (lease.handoffTo !== null) item.handoffTo = { S: lease.handoffTo };
  return item;
}

/** The item as the in-memory table keeps it. */
function storedItem(lease: Lease): StoredItem {
  return {
    topic: lease.topic,
    partition: lease.partition,
    counter: lease.counter,
    expiresAt: lease.expiresAt,
    ...(lease.owner === null ? {} : { owner: lease.owner }),
    ...(lease.checkpoint === null ? {} : { checkpoint: lease.checkpoint }),
    ...(lease.handoffTo === null ? {} : { handoffTo: lease.handoffTo }),
  };
}

/** Every condition the store writes under, from the views a writer may have. */
function conditions(): Record<string, Condition> {
  const a = { owner: "a", counter: 5 };
  const all: Record<string, Condition> = { create: LeaseConditions.create() };
  for (const [name, observed] of Object.entries(STORED))
    all[`claim ${name}`] = LeaseConditions.claim(observed);
  all["claim stale expiry"] = LeaseConditions.claim({ ...STORED.heldByA, expiresAt: 900 });
  all["renew a5"] = LeaseConditions.renew(a);
  all["renew a4"] = LeaseConditions.renew({ owner: "a", counter: 4 });
  all["release a5"] = LeaseConditions.release(a);
  all["release b5"] = LeaseConditions.release({ owner: "b", counter: 5 });
  all["requestHandoff a5"] = LeaseConditions.requestHandoff(a);
  all["handOver a5 to b"] = LeaseConditions.handOver(a, "b");
  all["handOver a5 to c"] = LeaseConditions.handOver(a, "c");
  for (const now of [999, 1_000, 1_001]) {
    for (const [from, next] of [
      [null, 10],
      [50, 50],
      [50, 60],
      [40, 60],
      [60, 60],
    ] as const) {
      const held = { ...leaseOf(TP, { expiresAt: 1_000, checkpoint: from }), ...a };
      all[`checkpoint ${from}->${next} at ${now}`] = LeaseConditions.checkpoint(held, next, now);
    }
    for (const from of [40, 50])
      all[`reset from ${from} at ${now}`] = LeaseConditions.resetCheckpoint(a, from, now);
  }
  return all;
}

describe("lease conditions against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  /** Whether DynamoDB accepts a write under `condition` on `stored` (undefined: no item). */
  async function accepts(
    tableName: string,
    stored: Lease | undefined,
    condition: Condition,
  ): Promise<boolean> {
    if (stored === undefined) {
      await db.client.send(new DeleteItemCommand({ TableName: tableName, Key: keyOf(TP) }));
    } else {
      await db.client.send(new PutItemCommand({ TableName: tableName, Item: itemOf(stored) }));
    }
    const table = new DynamoDbLeaseTable({ client: db.client, tableName });
    const changes = new ChangeSet().with("updatedAt", 2);
    return (await table.update("orders:3", changes, condition, { operation: "test" })).ok;
  }

  it("decides in memory what DynamoDB decides, for every stored item and condition", async () => {
    const tableName = await db.freshLeaseTable();
    const disagreements: string[] = [];
    let accepted = 0;
    let cases = 0;
    for (const [itemName, stored] of [...Object.entries(STORED), ["missing", undefined] as const]) {
      for (const [conditionName, condition] of Object.entries(conditions())) {
        const dynamo = await accepts(tableName, stored, condition);
        if (dynamo !== holds(condition, stored === undefined ? undefined : storedItem(stored))) {
          disagreements.push(`${conditionName} on ${itemName}: DynamoDB ${dynamo}, in memory ${!dynamo}`);
        }
        cases += 1;
        if (dynamo) accepted += 1;
      }
    }
    assert.deepEqual(disagreements, []);
    // The matrix is worth something only if it has both answers in it.
    assert.ok(accepted > 10 && cases - accepted > 10, `${accepted} of ${cases} accepted`);
  });
});
