// target.copy "batches" with the source batch's CRC left to the target's broker, as the worker
// reads (KafkaPartitionReader batchCrc "write", codec/pass-through.ts), on the mock or on real
// Kafka (KAFKA_TESTBED): a batch changed on its way from the source (a proxy flips a byte of a
// record), written behind sound ones, is refused by the target's broker as CORRUPT_MESSAGE,
// nothing of that write is committed, and the next read, sound, is copied byte for byte. Red if the copy's CRC were
// computed from its bytes instead of from the source's stored CRC: the changed record would land.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import { type CorruptingProxy, startCorruptingProxy } from "../../helpers/corrupting-proxy.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { kcatProduce, kcatReadDetailed } from "../../helpers/kcat.js";
import { dataOf, type RawBatch, rawBatches } from "../../helpers/raw-batches.js";

const LIMITS = { maxRecords: 1000, maxBytes: 1 << 20, maxWaitMs: 0 };

/** The data batches a read_committed consumer sees, for a log of transactional writers. */
function committedData(batches: readonly RawBatch[]): RawBatch[] {
  const open = new Map<bigint, RawBatch[]>();
  const committed: RawBatch[] = [];
  for (const b of batches) {
    const { producerId, isControl, isTransactional, controlType } = b.batch;
    if (!isControl && !isTransactional) committed.push(b);
    else if (!isControl) open.set(producerId, [...(open.get(producerId) ?? []), b]);
    else {
      if (controlType === "commit") committed.push(...(open.get(producerId) ?? []));
      open.delete(producerId);
    }
  }
  return committed;
}

describe("target.copy batches: a source batch changed on the way is refused by the target's broker", () => {
  let kafka: TestKafka;
  let proxy: CorruptingProxy;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    kafka = await startTestKafka({ brokers: 1 });
    proxy = await startCorruptingProxy(kafka.bootstrapServers[0] as string);
  });

  after(async () => {
    await Promise.allSettled(closers.map((close) => close()));
    await proxy.stop();
    await kafka.stop();
  });

  const read = (topic: string) =>
    kcatReadDetailed({
      brokers: kafka.bootstrapServers,
      topic,
      partition: 0,
      fromOffset: 0,
      config: { "isolation.level": "read_committed" },
    });

  it("refuses the changed batch, commits nothing of that write, then copies the sound one byte for byte", async () => {
    // Prepare: two kcat calls (two batches or more) in the source; the worker's reader behind the proxy.
    const source: TopicPartition = { topic: `crc-source-${randomUUID()}`, partition: 0 };
    const target: TopicPartition = { topic: `crc-target-${randomUUID()}`, partition: 0 };
    await kafka.createTopic(source.topic, 1);
    await kafka.createTopic(target.topic, 1);
    for (const round of [0, 1]) {
      await kcatProduce({
        brokers: kafka.bootstrapServers,
        ...source,
        records: Array.from({ length: 3 }, (_, i) => ({
          key: Buffer.from(`key-${round}-${i}`),
          value: Buffer.from(`value of round ${round}, record ${i}`),
        })),
      });
    }
    const reader = new KafkaPartitionReader({
      brokers: proxy.bootstrapServers,
      clientId: "crc-read",
      batchCrc: "write",
    });
    const writer = new KafkaPartitionWriter({
      brokers: kafka.bootstrapServers,
      clientId: "crc-write",
      requestTimeoutMs: 10_000,
      retryDeadlineMs: 10_000,
      transactions: { alias: `alias-${randomUUID().slice(0, 8)}`, transactionTimeoutMs: 60_000 },
    });
    closers.push(
      () => reader.close(),
      () => writer.close(),
    );
    await writer.fence(target);

    const sourceBatches = dataOf(await rawBatches(kafka.bootstrapServers, source.topic));
    const last = sourceBatches.at(-1)?.batch.baseOffset ?? -1;

    // Act: the first read comes with the last batch changed, behind sound ones in the same
    // write; then read again, sound, and copy to the end.
    proxy.corruptBatch(source.topic, last, 1);
    const changed = await reader.fetchBatches(source, 0, LIMITS);
    assert.equal(proxy.corrupted(), 1, "the proxy changed a batch");
    const refusal = await writer.write(target, changed.batches).then(
      () => null,
      (error: unknown) => error,
    );
    const lookRefusal = await reader.contentCrc(changed.batches.at(-1) as (typeof changed.batches)[0]).then(
      () => null,
      (error: unknown) => error,
    );
    const afterRefusal = await read(target.topic);
    for (let offset = 0; ; ) {
      const fetched = await reader.fetchBatches(source, offset, LIMITS);
      if (fetched.batches.length > 0) await writer.write(target, fetched.batches);
      if (fetched.nextOffset >= fetched.highWatermark) break;
      offset = fetched.nextOffset;
    }

    // Assess
    assert.equal(changed.batches.length, sourceBatches.length, "the changed batch behind sound ones");
    assert.ok(
      changed.batches.every((b) => b.contentCrc === null),
      "every batch passed unchecked",
    );
    assert.ok(
      isReplicatorError(refusal, "RECORD_REJECTED") && /CORRUPT_MESSAGE/.test(refusal.message),
      `the target refused the write: ${String(refusal)}`,
    );
    assert.ok(
      isReplicatorError(lookRefusal, "CORRUPT_BATCH"),
      `a look's contentCrc checks the CRC: ${String(lookRefusal)}`,
    );
    // Read committed; and a prefix committed by the refused write would be read twice below.
    assert.deepEqual(afterRefusal, [], "nothing of the refused write is committed");
    const [sourceRecords, targetRecords] = [await read(source.topic), await read(target.topic)];
    assert.equal(targetRecords.length, 6);
    const shown = (rs: typeof sourceRecords) =>
      rs.map(({ key, value, timestamp }) => ({ key, value, timestamp }));
    assert.deepEqual(shown(targetRecords), shown(sourceRecords), "every record once, as the source holds it");
    const targetBatches = await rawBatches(kafka.bootstrapServers, target.topic);
    const committed = committedData(targetBatches);
    const aborted = dataOf(targetBatches).length - committed.length;
    assert.ok(aborted >= 1, "the sound batches before the changed one were written, then aborted");
    const kept = (bytes: Buffer) => bytes.subarray(57); // record count and records: untouched by a copy
    assert.deepEqual(
      committed.map((b) => kept(b.bytes)),
      sourceBatches.map((b) => kept(b.bytes)),
      "each committed batch's records as the source stored them",
    );
  });
});
