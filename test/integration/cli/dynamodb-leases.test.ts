/**
 * `--lease-store dynamodb`: the CLI's run and status on the real DynamoDB API (DynamoDB Local),
 * reached the way the SDK is usually configured (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { StatusRow } from "../../../lib/cli/status-rows.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { runCliCaptured } from "../../helpers/cli.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const cli = runCliCaptured;

describe("kafka-mirror with --lease-store dynamodb", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dynamo: DynamoDbLocal;
  let dir: string;
  let config: string;
  const table = `cli-leases-${process.pid}`;
  const saved = { ...process.env };

  before(async () => {
    [source, target, dynamo] = await Promise.all([
      startMockKafka({ brokers: 1 }),
      startMockKafka({ brokers: 1 }),
      startDynamoDbLocal(),
    ]);
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
    });
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-"));
    config = join(dir, "mirror.json");
    await writeFile(
      config,
      JSON.stringify({
        source: { brokers: source.bootstrapServers },
        target: { brokers: target.bootstrapServers, requestTimeoutMs: 2_000 },
        topics: { whitelist: "USER-BI-TOPIC" },
        batch: { maxWaitMs: 100 },
        leases: { table, durationMs: 10_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
      }),
    );
    await source.createTopic("USER-BI-TOPIC", 2);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    try {
      for (const partition of [0, 1]) {
        await writer.write(
          { topic: "USER-BI-TOPIC", partition },
          makeRecords(120, partition).map((r, i) => ({ ...r, offset: i })),
        );
      }
    } finally {
      await writer.close();
    }
  });

  after(async () => {
    process.env = saved;
    await Promise.allSettled([source?.stop(), target?.stop(), dynamo?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a table that does not exist, naming it, instead of creating one", async () => {
    const result = await cli(["run", "--once", "--config", config, "--lease-store", "dynamodb"]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`lease table ${table} does not exist`));
    assert.doesNotMatch(result.stderr, /\n\s+at /);
  });

  it("status, offsets and failover name a missing table, or one without leases, and exit 2 creating nothing", async () => {
    const message = `kafka-mirror: no checkpoints in DynamoDB table ${table}: wrong leases.table, or AWS_REGION? [LEASE_STATE_MISSING]\n`;
    const readers = [["status"], ["offsets"], ["failover", "--group", "g", "--dry-run"]];
    for (const args of readers) {
      const result = await cli([...args, "--config", config, "--lease-store", "dynamodb"]);
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      assert.equal(result.stderr, message);
    }
    const client = dynamo.client();
    try {
      await createLeaseTable(client, table);
      for (const args of readers) {
        const result = await cli([...args, "--config", config, "--lease-store", "dynamodb", "--json"]);
        assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
        // The text line, or --json's error object where the CLI has one: the same message either way.
        const text = `no checkpoints in DynamoDB table ${table}: wrong leases.table, or AWS_REGION?`;
        assert.ok(
          result.stderr.includes(text) && result.stderr.includes("LEASE_STATE_MISSING"),
          result.stderr,
        );
      }
      assert.deepEqual(
        await new DynamoDbLeaseStore({ client, tableName: table }).list(),
        [],
        "no lease created",
      );
    } finally {
      client.destroy();
    }
  });

  it("runs against the table and status reads its checkpoints", async () => {
    const client = dynamo.client();
    try {
      await createLeaseTable(client, table);
      const run = await cli(["run", "--once", "--config", config, "--lease-store", "dynamodb"]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, new RegExp(`DynamoDB table ${table}`));

      const leases = await new DynamoDbLeaseStore({ client, tableName: table }).list();
      assert.deepEqual(leases.map((l) => [l.partition, l.checkpoint]).sort(), [
        [0, 120],
        [1, 120],
      ]);
      const status = await cli(["status", "--config", config, "--lease-store", "dynamodb", "--json"]);
      assert.equal(status.code, 0, status.stderr);
      const rows = (JSON.parse(status.stdout) as { partitions: StatusRow[] }).partitions;
      assert.deepEqual(
        rows.map((r) => [r.topic, r.partition, r.checkpoint, r.logEnd, r.lag]),
        [
          ["USER-BI-TOPIC", 0, 120, 120, 0],
          ["USER-BI-TOPIC", 1, 120, 120, 0],
        ],
      );
    } finally {
      client.destroy();
    }
  });
});
