/**
 * DynamoDbLeaseStore's checkpoint source position and resetCheckpoint against DynamoDB Local:
 * the topic id and leader epoch ride with the checkpoint, a reset may move it backwards, and a
 * reset from a holder that lost the lease (or decided on a stale checkpoint) is refused.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GetItemCommand, UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import type { Lease } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";

const tp = { topic: "orders", partition: 0 };
const source = { topicId: "0f3c5a9e2b7d4e61a8c9d0e1f2a3b4c5", leaderEpoch: 4 };

function leaseLost(reason: string) {
  return (error: unknown): boolean => {
    assert.ok(isReplicatorError(error, "LEASE_LOST"), `expected LEASE_LOST, got ${String(error)}`);
    assert.equal(error.details.reason, reason);
    return true;
  };
}

describe("DynamoDbLeaseStore checkpoint resets against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  /** A fresh table with `tp` held by w1 at checkpoint 500 (target position 900, `source`). */
  async function heldAt500(): Promise<{
    store: DynamoDbLeaseStore;
    held: Lease;
    now: number;
    tableName: string;
  }> {
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });
    await store.ensure([tp]);
    const [free] = await store.list();
    assert.ok(free);
    const now = Date.now();
    const claimed = await store.claim(free, "w1", now + 60_000);
    assert.ok(claimed);
    const held = await store.checkpoint(claimed, 500, now, 900, source);
    return { store, held, now, tableName };
  }

  it("stores the topic id and epoch with the checkpoint: an unknown id is kept, an unknown epoch is not", async () => {
    const { store, held, now } = await heldAt500();
    assert.equal(held.sourceTopicId, source.topicId);
    assert.equal(held.sourceEpoch, 4);

    const next = await store.checkpoint(held, 600, now, 950, { topicId: null, leaderEpoch: null });

    assert.equal(next.checkpoint, 600);
    assert.equal(next.sourceTopicId, source.topicId);
    // An epoch always goes with the checkpoint it was stored with (Lease.sourceEpoch).
    assert.equal(next.sourceEpoch, null);
  });

  it("ignores and removes the epoch attribute of older versions, which could be stale", async () => {
    // Prepare: an item as an older version left it, its epoch under the old attribute name.
    const { store, held, now, tableName } = await heldAt500();
    const key = { leaseKey: { S: "orders:0" } };
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: "SET sourceLeaderEpoch = :e REMOVE sourceEpoch",
        ExpressionAttributeValues: { ":e": { N: "1" } },
      }),
    );
    const [old] = await store.list();
    assert.equal(old?.sourceEpoch, null);

    // Act
    await store.checkpoint({ ...held, sourceEpoch: null }, 700, now, 990, source);

    // Assess
    const item = await db.client.send(new GetItemCommand({ TableName: tableName, Key: key }));
    assert.equal(item.Item?.sourceLeaderEpoch, undefined);
    assert.deepEqual(item.Item?.sourceEpoch, { N: "4" });
    assert.deepEqual(item.Item?.sourceEpochAt, { N: "700" });
  });

  it("an epoch counts only with the checkpoint it was stored with (an older version moved it)", async () => {
    // Prepare: checkpoint 500 with epoch 4; an older version moves the checkpoint to 800 the
    // way it writes (sourceLeaderEpoch, never sourceEpoch).
    const { store, tableName } = await heldAt500();
    await db.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { leaseKey: { S: "orders:0" } },
        UpdateExpression: "SET #c = :c, sourceLeaderEpoch = :e",
        ExpressionAttributeNames: { "#c": "checkpoint" },
        ExpressionAttributeValues: { ":c": { N: "800" }, ":e": { N: "5" } },
      }),
    );

    // Act
    const [moved] = await store.list();

    // Assess: epoch 4 describes the records from 500 on, not from 800: unknown.
    assert.equal(moved?.checkpoint, 800);
    assert.equal(moved?.sourceEpoch, null);
  });

  it("moves the checkpoint back with the new log's position, removing what is unknown", async () => {
    const { store, held, now } = await heldAt500();

    const reset = await store.resetCheckpoint(held, 0, now, "topic-recreated", {
      targetOffset: null,
      source: { topicId: "aa".repeat(16), leaderEpoch: null },
    });

    assert.equal(reset.checkpoint, 0);
    assert.equal(reset.targetOffset, null);
    assert.equal(reset.sourceTopicId, "aa".repeat(16));
    assert.equal(reset.sourceEpoch, null);
    assert.deepEqual(await store.list(), [reset]);
    // A retry of the reset that landed succeeds and changes nothing.
    const again = await store.resetCheckpoint(held, 0, now, "topic-recreated", {
      targetOffset: null,
      source: { topicId: "aa".repeat(16), leaderEpoch: null },
    });
    assert.equal(again.checkpoint, 0);
  });

  it("refuses a reset from a holder whose lease was taken over", async () => {
    const { store, held, now } = await heldAt500();
    // w1 stalls past its expiry; w2 takes the lease, resets and copies on.
    const [expired] = await store.list();
    assert.ok(expired);
    const taken = await store.claim({ ...expired }, "w2", now + 120_000);
    assert.ok(taken);
    const reset = await store.resetCheckpoint(taken, 300, now, "log-truncated", {
      targetOffset: 1200,
      source: { topicId: source.topicId, leaderEpoch: 4 },
    });
    await store.checkpoint(reset, 450, now, 1300, { topicId: source.topicId, leaderEpoch: 5 });

    // w1's late reset must not rewind w2's progress.
    await assert.rejects(
      store.resetCheckpoint(held, 300, now, "log-truncated", {
        targetOffset: 1200,
        source: { topicId: source.topicId, leaderEpoch: 4 },
      }),
      leaseLost("taken"),
    );
    const [stored] = await store.list();
    assert.equal(stored?.checkpoint, 450);
    assert.equal(stored?.sourceEpoch, 5);
  });

  it("refuses a reset decided on a checkpoint that is not the stored one any more", async () => {
    const { store, held, now } = await heldAt500();
    const later = await store.checkpoint(held, 700, now, 990, source);
    assert.equal(later.checkpoint, 700);

    // `held` still says 500: a reset decided on it is stale.
    await assert.rejects(
      store.resetCheckpoint(held, 300, now, "log-truncated", {
        targetOffset: 1000,
        source,
      }),
      leaseLost("checkpoint-ahead"),
    );
    const [stored] = await store.list();
    assert.equal(stored?.checkpoint, 700);
  });
});
