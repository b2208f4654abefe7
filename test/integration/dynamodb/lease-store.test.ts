/**
 * What only DynamoDB itself can show about the lease store: scans past DynamoDB's 1 MB page, an
 * item stored with a value of the wrong type, a missing or misshapen table, the emulator going
 * away. Everything the protocol promises is in the conformance suite (conformance.test.ts),
 * which runs here and on the in-memory table.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  CreateTableCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { Lease } from "../../../lib/core/ports.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable, describeLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { type ErrorCode, isReplicatorError } from "../../../lib/errors.js";
import { type DynamoDbLocal, startDynamoDbLocal, useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";

const MINUTE = 60_000;

function assertCode(code: ErrorCode, reason?: string) {
  return (error: unknown): boolean => {
    assert.ok(isReplicatorError(error, code), `expected ${code}, got ${String(error)}`);
    if (reason !== undefined) assert.equal(error.details.reason, reason);
    return true;
  };
}

describe("DynamoDbLeaseStore against DynamoDB Local", () => {
  const db = useDynamoDbLocal();

  /** A fresh table per test, so tests share nothing but the emulator. */
  async function freshStore(): Promise<{ store: DynamoDbLeaseStore; tableName: string }> {
    const tableName = await db.freshLeaseTable();
    return { store: new DynamoDbLeaseStore({ client: db.client, tableName }), tableName };
  }

  it("list returns every lease across scan pages", async () => {
    const { store, tableName } = await freshStore();
    const partitions = Array.from({ length: 300 }, (_, partition) => ({ topic: "big", partition }));
    await store.ensure(partitions);
    // Prepare: ~4 KiB of padding per item pushes 300 items past DynamoDB's 1 MB scan page.
    const padding = "x".repeat(4_096);
    for (const { partition } of partitions) {
      await db.client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: { leaseKey: { S: `big:${partition}` } },
          UpdateExpression: "SET padding = :p",
          ExpressionAttributeValues: { ":p": { S: padding } },
        }),
      );
    }
    const firstPage = await db.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    assert.ok(firstPage.LastEvaluatedKey, "precondition: the table needs more than one scan page");

    const leases = await store.list();

    assert.deepEqual(
      leases.map((l) => l.partition).sort((a, b) => a - b),
      partitions.map((p) => p.partition),
    );
  });

  it("list skips a malformed item, naming its key and attribute, and lists the rest", async () => {
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    const tableName = await db.freshLeaseTable();
    const store = new DynamoDbLeaseStore({ client: db.client, tableName, logger, metrics });
    await store.ensure([{ topic: "orders", partition: 0 }]);
    await db.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          leaseKey: { S: "orders:1" },
          topic: { S: "orders" },
          partition: { N: "1" },
          counter: { S: "seven" },
          expiresAt: { N: "0" },
        },
      }),
    );

    const leases = await store.list();

    assert.deepEqual(
      leases.map((l) => `${l.topic}:${l.partition}`),
      ["orders:0"],
    );
    assert.deepEqual(metrics.skipped, [{ leaseKey: "orders:1", attribute: "counter" }]);
    const [warning, ...more] = logger.at("warn");
    assert.equal(more.length, 0);
    assert.equal(warning?.fields.leaseKey, "orders:1");
    assert.equal(warning?.fields.attribute, "counter");
    assert.doesNotMatch(JSON.stringify(warning), /seven/);
  });

  it("a missing table gives LEASE_STORE_INVALID", async () => {
    const store = new DynamoDbLeaseStore({ client: db.client, tableName: `missing-${randomUUID()}` });

    await assert.rejects(store.list(), assertCode("LEASE_STORE_INVALID"));
    await assert.rejects(
      store.ensure([{ topic: "orders", partition: 0 }]),
      assertCode("LEASE_STORE_INVALID"),
    );
  });

  it("a table with the wrong key schema gives LEASE_STORE_INVALID", async () => {
    const tableName = `wrong-${randomUUID()}`;
    await db.client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "N" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
    const store = new DynamoDbLeaseStore({ client: db.client, tableName });

    await assert.rejects(describeLeaseTable(db.client, tableName), (error: unknown) => {
      assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"));
      assert.match(error.message, /partition key must be "leaseKey", found "pk".*no sort key, found "sk"/);
      return true;
    });
    await assert.rejects(createLeaseTable(db.client, tableName), assertCode("LEASE_STORE_INVALID"));
    await assert.rejects(
      store.ensure([{ topic: "orders", partition: 0 }]),
      assertCode("LEASE_STORE_INVALID"),
    );
  });

  it("createLeaseTable accepts a table that already exists with the right schema", async () => {
    const { tableName } = await freshStore();

    await createLeaseTable(db.client, tableName);

    const table = await describeLeaseTable(db.client, tableName);
    assert.equal(table.TableStatus, "ACTIVE");
    assert.equal(table.BillingModeSummary?.BillingMode, "PAY_PER_REQUEST");
  });
});

describe("DynamoDbLeaseStore when DynamoDB Local goes away", () => {
  let ddb: DynamoDbLocal;
  let client: DynamoDBClient;
  let dbPath: string;

  before(async () => {
    dbPath = mkdtempSync(join(tmpdir(), "kafka-mirror-ddb-"));
    ddb = await startDynamoDbLocal({ dbPath });
    client = ddb.client();
  });
  after(async () => {
    client.destroy();
    await ddb.stop();
    rmSync(dbPath, { recursive: true, force: true });
  });

  it("fails fast with a retryable LEASE_STORE_UNAVAILABLE, and works again after a restart", async () => {
    const tableName = `leases-${randomUUID()}`;
    await createLeaseTable(client, tableName);
    const store = new DynamoDbLeaseStore({ client, tableName });
    await store.ensure([{ topic: "orders", partition: 0 }]);
    const [free] = await store.list();
    assert.ok(free);
    const held = await claimed(store, free, "worker-a", Date.now() + MINUTE);
    await ddb.stop();

    const started = Date.now();
    for (const operation of [
      () => store.list(),
      () => store.claim(free, "worker-b", Date.now() + MINUTE),
      () => store.checkpoint(held, 10, Date.now()),
      () => store.ensure([{ topic: "orders", partition: 1 }]),
    ]) {
      await assert.rejects(operation(), (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_STORE_UNAVAILABLE"), String(error));
        assert.equal(error.retryable, true);
        assert.ok(error.cause, "keeps the SDK error as cause");
        return true;
      });
    }
    assert.ok(Date.now() - started < 20_000, "failures come within the client's timeouts");

    await ddb.restart();
    const after10 = await store.checkpoint(held, 10, Date.now());
    assert.equal(after10.checkpoint, 10);
    assert.equal(after10.owner, "worker-a");
  });

  async function claimed(store: DynamoDbLeaseStore, observed: Lease, owner: string, expiresAt: number) {
    const lease = await store.claim(observed, owner, expiresAt);
    assert.ok(lease);
    return lease;
  }
});
