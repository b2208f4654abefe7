// Our KafkaPartitionReader on partitions that hold transactions written by an independent producer
// (librdkafka's own, .testbed/bin/txn-client in its "script" mode), checked against kcat, on the
// mock or on real Kafka (KAFKA_TESTBED), whose markers the mock's patched ones must match.
// Regression: the test broker wrote its COMMIT/ABORT control batches with CRC 0, and our decoder
// (rightly) refused them with CORRUPT_BATCH, so the reader failed on any partition that held a
// finished transaction; testbed/mock-kafka/patch-control-batch.pl makes them Kafka's.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import type { FetchedRecords, MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import { KafkaPartitionReader, type SourceIsolationLevel } from "../../../lib/kafka/read/source-reader.js";
import { stableOffsetReaches } from "../../helpers/kafka-eventually.js";
import { KAFKA_TESTBED, startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { type KcatReadRecord, kcatRead } from "../../helpers/kcat.js";
import { rawBatches } from "../../helpers/raw-batches.js";
import { ScriptedProducer, TXN_CLIENT } from "../../helpers/txn-script.js";

const LIMITS = { maxRecords: 1000, maxBytes: 1 << 20, maxWaitMs: 0 };

interface ReadResult {
  readonly records: MirrorRecord[];
  /** The last fetch's: where the reader stands, and the end it can reach. */
  readonly last: FetchedRecords;
}

/** Fetches from `from` until the reader reaches the end it reports (for read_committed the LSO). */
async function readToEnd(
  reader: KafkaPartitionReader,
  tp: TopicPartition,
  from: number,
): Promise<ReadResult> {
  const records: MirrorRecord[] = [];
  let last = await reader.fetch(tp, from, LIMITS);
  records.push(...last.records);
  while (last.nextOffset < last.highWatermark) {
    const next = await reader.fetch(tp, last.nextOffset, LIMITS);
    assert.ok(next.nextOffset > last.nextOffset, `no progress at ${last.nextOffset}`);
    records.push(...next.records);
    last = next;
  }
  return { records, last };
}

/** Offset, key and value as text (txn-client's keys and values are ASCII labels). */
function view(records: readonly (MirrorRecord | KcatReadRecord)[]): string[] {
  return records.map((r) => `${r.offset} ${r.key?.toString("latin1")}=${r.value?.toString("latin1")}`);
}

/** Kafka's one control record: length 16, attributes 0, timestamp and offset deltas 0, key
 * (version 0, type), value (version 0, coordinatorEpoch 0), no headers (ControlRecordType,
 * EndTransactionMarker). */
function controlRecord(type: 0 | 1): Buffer {
  return Buffer.from([32, 0, 0, 0, 8, 0, 0, 0, type, 12, 0, 0, 0, 0, 0, 0, 0]);
}

const labels = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe("KafkaPartitionReader on transactional partitions (independent producer)", () => {
  let kafka: TestKafka;
  const readers: KafkaPartitionReader[] = [];
  const producers: ScriptedProducer[] = [];

  const newReader = (isolationLevel: SourceIsolationLevel): KafkaPartitionReader => {
    const reader = new KafkaPartitionReader({
      brokers: kafka.bootstrapServers,
      clientId: `read-txn-${isolationLevel}`,
      isolationLevel,
    });
    readers.push(reader);
    return reader;
  };

  const newProducer = async (topic: string): Promise<ScriptedProducer> => {
    const producer = new ScriptedProducer(kafka.bootstrapServers, topic);
    producers.push(producer);
    await producer.init();
    return producer;
  };

  before(async () => {
    assert.ok(existsSync(TXN_CLIENT), `${TXN_CLIENT} is missing: run \`npm run setup:testbed\``);
    kafka = await startTestKafka({ brokers: KAFKA_TESTBED === "real" ? 1 : 3 });
  });

  after(async () => {
    await Promise.allSettled(readers.map((r) => r.close()));
    await Promise.all(producers.map((p) => p.kill()));
    await kafka.stop();
  });

  it("reads committed, aborted, committed transactions: read_committed sees the committed records, read_uncommitted all", async () => {
    // Prepare: offsets 0-2 committed, 3 COMMIT, 4-5 aborted, 6 ABORT, 7-8 committed, 9 COMMIT.
    const topic = `read-txn-${randomUUID()}`;
    await kafka.createTopic(topic, 1);
    const producer = await newProducer(topic);
    await producer.transaction("first", 3, "commit");
    await producer.transaction("aborted", 2, "abort");
    await producer.transaction("second", 2, "commit");
    await producer.close();
    const tp = { topic, partition: 0 };
    const brokers = kafka.bootstrapServers;
    // A commit returns before its marker is written. The coordinator starts a transaction only
    // once the one before has its markers, so only the last can be missing: until then the LSO is 7.
    await stableOffsetReaches(brokers, tp, 10);
    const kcatCommitted = await kcatRead({
      brokers,
      topic,
      partition: 0,
      config: { "isolation.level": "read_committed" },
    });
    const kcatAll = await kcatRead({
      brokers,
      topic,
      partition: 0,
      config: { "isolation.level": "read_uncommitted" },
    });

    // Act
    const committed = await readToEnd(newReader("read_committed"), tp, 0);
    const uncommitted = await readToEnd(newReader("read_uncommitted"), tp, 0);

    // Assess: kcat as the independent reference, and the layout we wrote.
    assert.deepEqual(
      committed.records.map((r) => r.key?.toString("latin1")),
      [...labels("first", 3), ...labels("second", 2)],
    );
    assert.deepEqual(view(committed.records), view(kcatCommitted), "read_committed: as kcat sees it");
    assert.equal(committed.last.nextOffset, 10, "read_committed: past the last COMMIT marker");
    assert.equal(committed.last.highWatermark, 10, "nothing open: the LSO is the log end");
    assert.deepEqual(
      uncommitted.records.map((r) => r.key?.toString("latin1")),
      [...labels("first", 3), ...labels("aborted", 2), ...labels("second", 2)],
    );
    assert.deepEqual(view(uncommitted.records), view(kcatAll), "read_uncommitted: as kcat sees it");
    assert.deepEqual(
      uncommitted.records.map((r) => r.offset),
      [0, 1, 2, 4, 5, 7, 8],
    );
    assert.equal(uncommitted.last.nextOffset, 10);
  });

  it("writes COMMIT and ABORT markers as Kafka does: CRC-32C, control and transactional bits, the transaction's producer, no sequence", async () => {
    // Prepare / Act: one committed and one aborted transaction, read back batch by batch.
    const topic = `read-txn-markers-${randomUUID()}`;
    await kafka.createTopic(topic, 1);
    const producer = await newProducer(topic);
    const since = Date.now();
    await producer.transaction("kept", 2, "commit");
    await producer.transaction("dropped", 2, "abort");
    await producer.close();
    const until = Date.now();
    // The ABORT marker is written after the abort returned; rawBatches reads to the log end.
    await stableOffsetReaches(kafka.bootstrapServers, { topic, partition: 0 }, 6);
    const batches = await rawBatches(kafka.bootstrapServers, topic);

    // Assess: rawBatches decoded every batch, so every CRC checked out.
    const data = batches.filter((b) => !b.batch.isControl);
    const markers = batches.filter((b) => b.batch.isControl);
    assert.deepEqual(
      batches.map((b) => [b.batch.baseOffset, b.batch.isControl ? b.batch.controlType : "data"]),
      [
        [0, "data"],
        [2, "commit"],
        [3, "data"],
        [5, "abort"],
      ],
    );
    const [first] = data;
    assert.ok(first);
    for (const { batch, bytes } of markers) {
      const at = `marker at ${batch.baseOffset}`;
      assert.equal(bytes.readInt8(16), 2, `${at}: magic`);
      assert.equal(bytes.readInt16BE(21), 0x30, `${at}: attributes transactional | control, no codec`);
      assert.equal(batch.lastOffset, batch.baseOffset, `${at}: one offset`);
      assert.equal(batch.producerId, first.batch.producerId, `${at}: the transaction's producer id`);
      assert.equal(batch.producerEpoch, first.batch.producerEpoch, `${at}: and epoch`);
      assert.equal(batch.baseSequence, -1, `${at}: baseSequence NO_SEQUENCE`);
      assert.equal(bytes.readInt32BE(57), 1, `${at}: one record`);
      const timestamp = Number(bytes.readBigInt64BE(27));
      assert.equal(Number(bytes.readBigInt64BE(35)), timestamp, `${at}: maxTimestamp = baseTimestamp`);
      assert.ok(timestamp >= since - 1000 && timestamp <= until + 1000, `${at}: stamped when written`);
      assert.deepEqual(
        bytes.subarray(61),
        controlRecord(batch.controlType === "commit" ? 1 : 0),
        `${at}: record`,
      );
    }
    for (const { batch } of data) assert.ok(batch.isTransactional && batch.baseSequence >= 0);
  });

  it("stops read_committed at the LSO of an open transaction and reports it as the high watermark", async () => {
    // Prepare: offsets 0-1 committed, 2 COMMIT, 3-4 in a transaction left open.
    const topic = `read-txn-open-${randomUUID()}`;
    await kafka.createTopic(topic, 1);
    const producer = await newProducer(topic);
    await producer.transaction("done", 2, "commit");
    await producer.run("begin");
    await producer.run("produce open 2");
    const tp = { topic, partition: 0 };
    const reader = newReader("read_committed");

    // Act
    const before = await readToEnd(reader, tp, 0);
    const atLso = await reader.fetch(tp, before.last.nextOffset, LIMITS);
    const uncommitted = await readToEnd(newReader("read_uncommitted"), tp, 0);

    // Assess
    assert.deepEqual(view(before.records), ["0 done-0=done-0", "1 done-1=done-1"]);
    assert.equal(before.last.nextOffset, 3, "read_committed reaches the LSO, past the COMMIT marker");
    assert.equal(before.last.highWatermark, 3, "highWatermark is the LSO");
    assert.deepEqual(atLso.records, [], "nothing at the LSO while the transaction is open");
    assert.equal(atLso.nextOffset, 3);
    assert.equal(atLso.highWatermark, 3);
    assert.deepEqual(
      uncommitted.records.map((r) => r.offset),
      [0, 1, 3, 4],
      "read_uncommitted sees the open transaction",
    );
    assert.equal(uncommitted.last.highWatermark, 5, "read_uncommitted: the log end");

    // Act / Assess: once it commits, read_committed goes on from the LSO to the new log end.
    await producer.run("commit");
    await producer.close();
    // The coordinator answers the commit, then writes the COMMIT marker at 5; until it is written
    // the LSO stays at 3 and read_committed rightly reads nothing more.
    await stableOffsetReaches(kafka.bootstrapServers, tp, 6);
    const after = await readToEnd(reader, tp, before.last.nextOffset);
    assert.deepEqual(view(after.records), ["3 open-0=open-0", "4 open-1=open-1"]);
    assert.equal(after.last.nextOffset, 6, "past the COMMIT marker at 5");
    assert.equal(after.last.highWatermark, 6);
  });
});
