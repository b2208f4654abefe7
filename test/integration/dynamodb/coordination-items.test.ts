/**
 * The protocol's own items as DynamoDB stores them, when a value has the wrong type (a hand
 * edit, another app): a worker item is skipped by the leader's scan and reported, a leader item
 * reads as given up and is taken over. Everything else about these items is in the conformance
 * suite (conformance.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";

const NOW = 1_700_000_000_000;

describe("lease protocol items of the wrong type against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  async function fresh() {
    const tableName = await db.freshLeaseTable();
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    return {
      tableName,
      logger,
      metrics,
      store: new DynamoDbLeaseStore({ client: db.client, tableName, logger, metrics }),
    };
  }

  it("a malformed leader item can still be taken over", async () => {
    const { store, tableName } = await fresh();
    await db.client.send(
      new PutItemCommand({ TableName: tableName, Item: { leaseKey: { S: "#leader" }, counter: { S: "x" } } }),
    );
    const observed = await store.leader();
    assert.equal(observed?.owner, null);
    const taken = await store.claimLeader(observed, "w1", NOW + 15_000);
    assert.equal(taken?.owner, "w1");
    assert.deepEqual(await store.leader(), taken);
  });

  it("a worker item with a value of the wrong type is skipped by the scan and reported", async () => {
    const { store, tableName, metrics } = await fresh();
    await store.ensure([{ topic: "t", partition: 0 }]);
    await store.heartbeat({
      workerId: "w1",
      slot: "3",
      startedAt: NOW,
      draining: false,
      deadline: NOW + 60_000,
      expiresAt: NOW + 15_000,
    });
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { leaseKey: { S: "#worker/bad" }, workerId: { N: "1" } },
      }),
    );

    const snapshot = await store.scan();

    assert.deepEqual(
      snapshot.workers.map((w) => w.workerId),
      ["w1"],
    );
    assert.equal(snapshot.leases.length, 1);
    assert.deepEqual(metrics.skipped, [{ leaseKey: "#worker/bad", attribute: "workerId" }]);
  });
});
