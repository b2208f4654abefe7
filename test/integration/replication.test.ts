/**
 * The replication core end to end: two Kafka clusters, DynamoDB Local, and three workers running
 * concurrently with short time budgets until caught up. The clusters are librdkafka's mock (3
 * brokers each) or real Kafka (KAFKA_TESTBED=real: a 1-broker source and a 3-broker target, so
 * the writers' transactions and produce requests still spread over several leaders and
 * coordinators; a JVM per broker is what a 2-core machine can afford).
 *
 * The source is written by three independent producers so that no single codec or client hides
 * a fidelity bug: kafkajs's own producer (keys, tombstones, repeated binary headers, explicit
 * timestamps, gzip), our record-batch writer (interleaved repeated headers, null header values,
 * non-UTF-8 keys, lz4/snappy/zstd) and kcat, i.e. librdkafka (all four codecs).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { CompressionTypes, Kafka, logLevel } from "kafkajs";
import type { CompressionCodec } from "../../lib/config/compression.js";
import { parseConfig } from "../../lib/config/schema.js";
import type { MirrorRecord, RecordHeader } from "../../lib/core/model.js";
import { encodeProvenance } from "../../lib/core/provenance.js";
import { DynamoDbLeaseStore } from "../../lib/dynamodb/lease-store.js";
import { createLeaseTable } from "../../lib/dynamodb/lease-table.js";
import { KafkaPartitionWriter } from "../../lib/kafka/produce/target-writer.js";
import { createReplicator, type Replicator } from "../../lib/replicator.js";
import { type DynamoDbLocal, startDynamoDbLocal } from "../helpers/dynamodb-local.js";
import { CapturingLogger, CapturingMetrics } from "../helpers/fake-observability.js";
import { KAFKA_TESTBED, startTestKafka, type TestKafka } from "../helpers/kafka-testbed.js";
import { type KcatCompression, kcatProduce, kcatRead } from "../helpers/kcat.js";
import { ClusterView, firstDifference, recordImage } from "../helpers/partition-data.js";

const PARTITIONS = 8;
/**
 * 3 topics x 8 partitions x 8,400 = 201,600 records on the mock; on real Kafka 2,400 (57,600),
 * still several batches of every producer and codec per partition, in the time a 2-core CI
 * machine has for the whole real-Kafka suite.
 */
const PER_PARTITION = KAFKA_TESTBED === "real" ? 2_400 : 8_400;
const WHITELISTED = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC", "USER-BI-TOPIC"] as const;
const UNLISTED = "SCRIPT-BI-TOPIC";
const BASE_TIME = 1_600_000_000_000;

/** Deterministic bytes that are not valid UTF-8 (0xff never occurs in UTF-8). */
function binary(seed: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  out[0] = 0xff;
  return out;
}

async function produceWithKafkajs(brokers: string[], topic: string): Promise<void> {
  const kafka = new Kafka({ clientId: "kafkajs-producer", brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let start = 0; start < PER_PARTITION; start += 1_200) {
        const messages = [];
        for (let i = start; i < Math.min(start + 1_200, PER_PARTITION); i++) {
          messages.push({
            partition,
            key: i % 11 === 0 ? null : binary(i, 12),
            // Every 7th record is a tombstone.
            value: i % 7 === 0 ? null : binary(i + 1, 40 + (i % 90)),
            // Explicit, non-monotonic timestamps: the target must keep them, not stamp its own.
            timestamp: String(BASE_TIME + i * 17 - (i % 5) * 1_000),
            headers: { trace: binary(i + 2, 8), tag: [Buffer.from("a"), binary(i + 3, 3)] },
          });
        }
        await producer.send({
          topic,
          acks: -1,
          compression: start % 2400 === 0 ? CompressionTypes.GZIP : CompressionTypes.None,
          messages,
        });
      }
    }
  } finally {
    await producer.disconnect();
  }
}

/** Records kafkajs's producer cannot express: interleaved repeated headers, null header values. */
function pushRecord(i: number): MirrorRecord {
  const headers: RecordHeader[] = [
    { key: Buffer.from("hop"), value: binary(i, 4) },
    { key: binary(i + 9, 3), value: null },
    { key: Buffer.from("hop"), value: Buffer.alloc(0) },
  ];
  return {
    offset: i,
    timestamp: BASE_TIME + i,
    key: binary(i + 5, 16),
    value: i % 13 === 0 ? null : binary(i + 6, 30 + (i % 60)),
    headers,
  };
}

async function produceWithOurWriter(brokers: string[], topic: string): Promise<void> {
  const codecs: CompressionCodec[] = ["lz4", "snappy", "zstd", "none"];
  await Promise.all(
    codecs.map(async (compression, c) => {
      const writer = new KafkaPartitionWriter({ brokers, compression, maxBatchRecords: 2_000 });
      try {
        for (let partition = c * 2; partition < c * 2 + 2; partition++) {
          const records = Array.from({ length: PER_PARTITION }, (_, i) => pushRecord(i));
          await writer.write({ topic, partition }, records);
        }
      } finally {
        await writer.close();
      }
    }),
  );
}

function kcatRecords(partition: number): { key: Buffer | null; value: Buffer | null }[] {
  // kcat turns empty keys/values into NULL (-Z); it cannot mix NULL and empty in one call.
  return Array.from({ length: PER_PARTITION }, (_, i) => ({
    key: i % 9 === 0 ? null : binary(partition * 100_000 + i, 10),
    value: i % 10 === 0 ? null : binary(partition * 100_000 + i + 1, 50),
  }));
}

async function produceWithKcat(brokers: string[], topic: string): Promise<void> {
  const codecs: KcatCompression[] = ["gzip", "snappy", "lz4", "zstd"];
  await Promise.all(
    Array.from({ length: PARTITIONS }, (_, partition) =>
      kcatProduce({
        brokers,
        topic,
        partition,
        compression: codecs[partition % codecs.length] ?? "none",
        records: kcatRecords(partition),
        headers: [
          ["origin", "kcat"],
          ["origin", "librdkafka"],
          ["empty", null],
        ],
      }),
    ),
  );
}

describe("replication: three workers over two clusters", () => {
  let source: TestKafka;
  let target: TestKafka;
  let dynamo: DynamoDbLocal;
  const table = `leases-${randomUUID()}`;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    [source, target, dynamo] = await Promise.all([
      startTestKafka({ brokers: KAFKA_TESTBED === "real" ? 1 : 3 }),
      startTestKafka({ brokers: 3 }),
      startDynamoDbLocal(),
    ]);
    const client = dynamo.client();
    closers.push(async () => client.destroy());
    await createLeaseTable(client, table);
    for (const topic of [...WHITELISTED, UNLISTED]) await source.createTopic(topic, PARTITIONS);
    await Promise.all([
      produceWithKafkajs(source.bootstrapServers, "BIN-BI-TOPIC"),
      produceWithOurWriter(source.bootstrapServers, "PUSH-BI-TOPIC"),
      produceWithKcat(source.bootstrapServers, "USER-BI-TOPIC"),
      produceWithKcat(source.bootstrapServers, UNLISTED),
    ]);
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
    await Promise.all([source?.stop(), target?.stop(), dynamo?.stop()]);
  });

  it("copies every whitelisted partition record for record and checkpoints its log end", async () => {
    // Prepare
    const config = parseConfig({
      source: { brokers: source.bootstrapServers, alias: "idc1", requestTimeoutMs: 5_000 },
      target: { brokers: target.bootstrapServers, requestTimeoutMs: 1_500, compression: "lz4" },
      topics: { whitelist: WHITELISTED.join("|") },
      batch: { maxRecords: 2_000, maxBytes: 256 * 1024, maxWaitMs: 100 },
      leases: { table, durationMs: 6_000, renewIntervalMs: 1_000, rebalanceIntervalMs: 300 },
    });
    const logger = new CapturingLogger();
    const metrics = new CapturingMetrics();
    const workers: Replicator[] = ["w1", "w2", "w3"].map((workerId) => {
      const client = dynamo.client();
      closers.push(async () => client.destroy());
      return createReplicator(config, { dynamodb: client, logger, metrics, workerId });
    });
    for (const w of workers) closers.push(() => w.close());
    const sourceView = new ClusterView(source.bootstrapServers);
    const targetView = new ClusterView(target.bootstrapServers);
    closers.push(
      () => sourceView.close(),
      () => targetView.close(),
    );
    const viewClient = dynamo.client();
    closers.push(async () => viewClient.destroy());
    const leaseView = new DynamoDbLeaseStore({ client: viewClient, tableName: table });
    const logEnds = new Map<string, number>();
    for (const topic of WHITELISTED) {
      const offsets = await sourceView.admin.listOffsets(topic, [...Array(PARTITIONS).keys()]);
      for (const o of offsets) logEnds.set(`${topic}:${o.partition}`, o.logEndOffset);
    }
    const caughtUp = async () => {
      const leases = await leaseView.list();
      return (
        leases.length === WHITELISTED.length * PARTITIONS &&
        leases.every((l) => l.checkpoint === logEnds.get(`${l.topic}:${l.partition}`))
      );
    };

    // Act: rounds of concurrent runs with a 5 s budget each, as scheduled Lambdas would do.
    let rounds = 0;
    const heldPerRound: number[][] = [];
    while (!(await caughtUp())) {
      rounds++;
      if (rounds > 40) {
        // What a flaky failure needs: which partitions were behind, and what the workers said.
        const behind = (await leaseView.list())
          .filter((l) => l.checkpoint !== logEnds.get(`${l.topic}:${l.partition}`))
          .map(
            (l) =>
              `${l.topic}/${l.partition} at ${l.checkpoint} of ${logEnds.get(`${l.topic}:${l.partition}`)}`,
          );
        const said = logger.entries
          .filter((e) => e.level === "warn" || e.level === "error")
          .slice(-30)
          .map((e) => `${e.level} ${e.message} ${JSON.stringify(e.fields)}`.slice(0, 400));
        assert.fail(`not caught up after 40 rounds; behind: ${behind.join(", ")}\n${said.join("\n")}`);
      }
      const summaries = await Promise.all(workers.map((w) => w.worker.replicate(Date.now() + 5_000)));
      heldPerRound.push(summaries.map((s) => s.partitions.length));
    }

    if (process.env.E2E_DEBUG)
      console.log(
        JSON.stringify(
          logger.entries.filter((e) => e.level !== "debug"),
          null,
          0,
        ).slice(0, 20000),
      );
    // Assess: every target partition equals its source partition, record for record, once the
    // workers' last commits have their markers (written after the commit returned).
    for (const topic of WHITELISTED) {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const tp = { topic, partition };
        await targetView.settled(tp);
        const [fromSource, fromTarget] = await Promise.all([sourceView.read(tp), targetView.read(tp)]);
        assert.equal(fromSource.length, PER_PARTITION, `${topic}/${partition} source count`);
        const at = firstDifference(fromSource, fromTarget);
        assert.equal(
          at,
          -1,
          `${topic}/${partition} differs at index ${at}: source has ${fromSource.length}, target ${fromTarget.length}`,
        );
      }
    }

    // The comparison above reads both sides with our decoder; check the target against what the
    // producers were given too, so a symmetric decoding bug cannot pass unnoticed.
    const push = await targetView.read({ topic: "PUSH-BI-TOPIC", partition: 3 });
    assert.deepEqual(
      push.map(recordImage),
      Array.from({ length: PER_PARTITION }, (_, i) => recordImage(pushRecord(i))),
    );
    const bin = await targetView.read({ topic: "BIN-BI-TOPIC", partition: 5 });
    const sample = bin[14]; // i = 14: key present, tombstone (14 % 7 === 0)
    assert.ok(sample !== undefined);
    assert.equal(sample.value, null);
    assert.deepEqual(sample.key, binary(14, 12));
    assert.equal(sample.timestamp, BASE_TIME + 14 * 17 - 4 * 1_000);
    assert.deepEqual(
      sample.headers.map((h) => [h.key.toString(), h.value]),
      [
        ["trace", binary(16, 8)],
        ["tag", Buffer.from("a")],
        ["tag", binary(17, 3)],
        // Appended by kafka-mirror (exactly-once mode, the default): where the copy came from.
        ["kafka-mirror.provenance", encodeProvenance({ alias: "idc1", partition: 5, offset: 14 })],
      ],
    );
    // An independent decoder (librdkafka, through kcat) reads the target too.
    for (const partition of [0, 3]) {
      const viaKcat = await kcatRead({ brokers: target.bootstrapServers, topic: "USER-BI-TOPIC", partition });
      const expected = kcatRecords(partition);
      assert.equal(viaKcat.length, expected.length);
      viaKcat.forEach((r, i) => {
        assert.deepEqual(
          [r.key, r.value],
          [expected[i]?.key, expected[i]?.value],
          `USER-BI-TOPIC/${partition}@${i}`,
        );
      });
    }

    // The unlisted topic was not copied; target topics have the source's partition count.
    const targetTopics = await targetView.admin.listTopics();
    assert.equal(
      targetTopics.find((t) => t.name === UNLISTED),
      undefined,
    );
    for (const topic of WHITELISTED) {
      assert.equal(targetTopics.find((t) => t.name === topic)?.partitions, PARTITIONS);
    }

    // Every checkpoint equals its source log end (checked by caughtUp) and nobody holds a lease.
    const leases = await leaseView.list();
    assert.equal(leases.length, WHITELISTED.length * PARTITIONS);
    for (const lease of leases) {
      assert.equal(lease.checkpoint, logEnds.get(`${lease.topic}:${lease.partition}`));
      assert.equal(lease.owner, null, `${lease.topic}/${lease.partition} still held by ${lease.owner}`);
    }
    // All three workers took part, and nothing failed.
    assert.ok(
      heldPerRound.some((held) => held.every((n) => n > 0)),
      `not every worker held partitions: ${JSON.stringify(heldPerRound)}`,
    );
    assert.deepEqual(metrics.errors, []);
    assert.deepEqual(logger.at("error"), []);
    assert.equal(
      metrics.batches.reduce((n, b) => n + b.records, 0) >= WHITELISTED.length * PARTITIONS * PER_PARTITION,
      true,
    );
  });
});
