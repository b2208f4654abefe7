// target.copy "batches" when Kafka gives the partition's transactional id a new producer id: a
// real Apache Kafka 4.1 target whose transactional ids expire after 3 s unused (Kafka's default
// is 7 days; the same happens when an id's epoch is exhausted), the source the mock test bed.
// A holder's write lands but its checkpoint does not; the id expires; the next holder's fence
// gets a new producer id. Its look must still take the first holder's copies for ours, which
// only the producer ids the lease lists can tell (Lease.producerIds): before, it skipped them as
// another writer's and copied them again.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Kafka, logLevel } from "kafkajs";
import { parseConfig } from "../../../lib/config/schema.js";
import type { TargetWriter } from "../../../lib/core/ports.js";
import { createEmbeddedLeaseClient } from "../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { ReplicatorError } from "../../../lib/errors.js";
import { createReplicator, type ReplicatorDependencies } from "../../../lib/replicator.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ClusterView } from "../../helpers/partition-data.js";
import { dataOf, rawBatches } from "../../helpers/raw-batches.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";
import { writerWith } from "../../helpers/writer-with.js";

const EXPIRY_MS = 3_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe("batches mode across a new producer id of the transactional id (real Kafka target)", () => {
  let kafka: RealKafka;
  let source: MockKafka;
  let stateDir: string;
  let dynamodb: DynamoDBClient;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "kafka-mirror-pid-change-"));
    [kafka, source, dynamodb] = await Promise.all([
      startRealKafka({
        brokers: 1,
        serverProperties: {
          "transactional.id.expiration.ms": String(EXPIRY_MS),
          "transaction.remove.expired.transaction.cleanup.interval.ms": "500",
        },
      }),
      startMockKafka({ brokers: 1 }),
      createEmbeddedLeaseClient({ stateDir }),
    ]);
  });

  after(async () => {
    dynamodb?.destroy();
    await Promise.allSettled([kafka?.stop(), source?.stop(), stopLeaseServer(stateDir)]);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("a holder whose fence got a new producer id takes the last holder's uncheckpointed copies for ours", {
    timeout: 120_000,
  }, async () => {
    // Prepare: 8 source batches of 10 records; fetches of one batch, writes of up to four.
    const topic = `PID-${randomUUID()}`;
    await source.createTopic(topic, 1, 1);
    const producer = new Kafka({ brokers: source.bootstrapServers, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    for (let b = 0; b < 8; b++) {
      const messages = Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `${b}-${i}` }));
      await producer.send({ topic, acks: -1, messages });
    }
    await producer.disconnect();
    const table = `leases-${randomUUID()}`;
    await createLeaseTable(dynamodb, table);
    const config = parseConfig({
      source: { brokers: source.bootstrapServers, alias: "src", requestTimeoutMs: 5_000 },
      target: { brokers: kafka.bootstrapServers, copy: "batches", fencing: "transactional" },
      topics: { whitelist: topic, discoveryIntervalMs: 600_000 },
      batch: { maxWaitMs: 100, maxRecords: 10 },
      leases: { table, rebalanceIntervalMs: 1_000 },
    });
    const run = async (decorateTarget?: ReplicatorDependencies["decorateTarget"]) => {
      const deps = {
        dynamodb,
        logger: new CapturingLogger(),
        metrics: new CapturingMetrics(),
        workerId: `w-${randomUUID().slice(0, 8)}`,
      };
      const replicator = createReplicator(
        config,
        decorateTarget === undefined ? deps : { ...deps, decorateTarget },
      );
      try {
        return await replicator.worker.replicate(Date.now() + 60_000, { stopWhenCaughtUp: true });
      } finally {
        await replicator.close();
      }
    };
    // The first holder's first write commits, and the holder never learns it: it stops there.
    let landed = 0;
    const lostAnswer = (writer: TargetWriter): TargetWriter =>
      writerWith(writer, {
        async write(tp, units, stamp, deadline, runDeadline) {
          const result = await writer.write(tp, units, stamp, deadline, runDeadline);
          landed += result.acknowledged;
          throw new ReplicatorError("RECORD_REJECTED", "the answer to a committed write never came (test)");
        },
      });
    const first = await run(lostAnswer);
    assert.deepEqual(
      first.errors.map((e) => e.code),
      ["RECORD_REJECTED"],
    );
    assert.ok(landed >= 10, `the first write landed ${landed} records`);
    const store = new DynamoDbLeaseStore({ client: dynamodb, tableName: table });
    const lease = await store.lease({ topic, partition: 0 });
    assert.equal(lease?.checkpoint, 0, "the landed write was never checkpointed");
    const [firstId] = lease?.producerIds ?? [];
    assert.ok(firstId !== undefined, "the lease lists the first holder's producer id");
    await sleep(EXPIRY_MS + 2_000); // the transactional id expires unused

    // Act
    const second = await run();

    // Assess: every record once, in order, though the copies carry two producer ids.
    assert.deepEqual(second.errors, []);
    const view = new ClusterView(kafka.bootstrapServers);
    try {
      const values = (await view.read({ topic, partition: 0 })).map((r) => r.value?.toString());
      const expected = Array.from({ length: 80 }, (_, i) => `${Math.floor(i / 10)}-${i % 10}`);
      assert.deepEqual(values, expected);
    } finally {
      await view.close();
    }
    const ids = new Set(
      dataOf(await rawBatches(kafka.bootstrapServers, topic)).map((b) => b.batch.producerId),
    );
    assert.equal(ids.size, 2, `copies by producer ids ${[...ids].join(", ")}: the id did not change`);
    const listed = (await store.lease({ topic, partition: 0 }))?.producerIds ?? [];
    assert.deepEqual(new Set(listed), ids);
  });
});
