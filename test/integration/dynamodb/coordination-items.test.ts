/**
 * The lease protocol's own items (lib/core/lease/coordination.ts) against DynamoDB Local:
 * heartbeat (with its backoff), assignment, removal and leader items, the conditions each write
 * is under, and that none of them, well-formed or not, gets in the way of reading leases.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import type { WorkerHeartbeat } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fakes.js";

const NOW = 1_700_000_000_000;

function beat(workerId: string, fields: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerId,
    slot: "3",
    startedAt: NOW,
    draining: false,
    deadline: NOW + 60_000,
    expiresAt: NOW + 15_000,
    ...fields,
  };
}

describe("lease protocol items against DynamoDB Local", () => {
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

  it("a heartbeat creates the worker item and returns the assignment the leader wrote, which later heartbeats keep", async () => {
    const { store } = await fresh();
    assert.equal((await store.heartbeat(beat("w1"))).assignment, null);
    assert.equal(await store.assign("w1", ["t:0", "t:1"]), true);

    const again = await store.heartbeat(beat("w1", { draining: true, expiresAt: NOW + 20_000 }));
    assert.deepEqual(again, {
      ...beat("w1", { draining: true, expiresAt: NOW + 20_000 }),
      assignment: ["t:0", "t:1"],
    });
  });

  it("a heartbeat publishes the worker's backoff for the leader's scan and a heartbeat without one removes it", async () => {
    const { store } = await fresh();
    const backoff = new Map([
      ["orders:1", NOW + 60_000],
      ["my.topic-2:0", NOW + 120_000],
    ]);

    const first = await store.heartbeat(beat("w1", { backoff }));
    const scanned = (await store.scan()).workers[0];
    const cleared = await store.heartbeat(beat("w1"));

    assert.deepEqual(first.backoff, backoff);
    assert.deepEqual(scanned?.backoff, backoff);
    assert.deepEqual(cleared, { ...beat("w1"), assignment: null }, "no backoff attribute left");
    await assert.rejects(
      store.heartbeat(beat("w1", { backoff: new Map([["orders:1", -1]]) })),
      /backoff\[orders:1\]/,
    );
  });

  it("worker reads a worker's own item with the assignment the leader wrote since its heartbeat; null for none", async () => {
    const { store } = await fresh();
    assert.equal(await store.worker("w1"), null);
    await store.heartbeat(beat("w1"));
    assert.equal(await store.assign("w1", ["t:0", "t:1"]), true);

    // Eventually consistent: DynamoDB Local answers with the latest write.
    assert.deepEqual(await store.worker("w1"), { ...beat("w1"), assignment: ["t:0", "t:1"] });
    await assert.rejects(store.worker(""), /workerId/);
  });

  it("assign writes only onto an existing worker item", async () => {
    const { store } = await fresh();
    assert.equal(await store.assign("nobody", ["t:0"]), false);
    assert.deepEqual((await store.scan()).workers, []);
  });

  it("removeWorker deletes only the item as the leader saw it: a heartbeat since keeps it", async () => {
    const { store } = await fresh();
    const seen = await store.heartbeat(beat("w1"));
    await store.heartbeat(beat("w1", { expiresAt: NOW + 30_000 }));
    assert.equal(await store.removeWorker(seen), false);
    const [now] = (await store.scan()).workers;
    assert.ok(now !== undefined);
    assert.equal(await store.removeWorker(now), true);
    assert.deepEqual((await store.scan()).workers, []);
  });

  it("of 10 workers taking the absent leader item at once exactly one wins; a stale view cannot renew", async () => {
    const { store } = await fresh();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.claimLeader(null, `w${i}`, NOW + 15_000)),
    );
    const winners = results.filter((r) => r !== null);
    assert.equal(winners.length, 1);
    const held = winners[0];
    assert.ok(held !== null && held !== undefined);
    assert.deepEqual(await store.leader(), held);

    const renewed = await store.claimLeader(held, held.owner ?? "", NOW + 30_000);
    assert.equal(renewed?.counter, held.counter + 1);
    assert.equal(await store.claimLeader(held, "late", NOW + 30_000), null, "the counter moved on");
  });

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

  it("list, lease and scan keep leases and protocol items apart; a malformed worker item is skipped and reported", async () => {
    const { store, tableName, metrics } = await fresh();
    await store.ensure([{ topic: "t", partition: 0 }]);
    await store.heartbeat(beat("w1"));
    await store.claimLeader(null, "w1", NOW + 15_000);
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { leaseKey: { S: "#worker/bad" }, workerId: { N: "1" } },
      }),
    );

    const leases = await store.list();
    assert.deepEqual(
      leases.map((l) => `${l.topic}:${l.partition}`),
      ["t:0"],
    );
    assert.equal((await store.lease({ topic: "t", partition: 0 }))?.counter, 0);
    assert.equal(await store.lease({ topic: "t", partition: 1 }), null);
    const snapshot = await store.scan();
    assert.deepEqual(
      snapshot.workers.map((w) => w.workerId),
      ["w1"],
    );
    assert.equal(snapshot.leader?.owner, "w1");
    assert.equal(snapshot.leases.length, 1);
    assert.deepEqual(metrics.skipped, [{ leaseKey: "#worker/bad", attribute: "workerId" }]);
  });
});
