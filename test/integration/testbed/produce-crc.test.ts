/**
 * A produced v2 batch whose CRC-32C does not match its bytes is refused with CORRUPT_MESSAGE (2)
 * and not stored, as Kafka's broker does (LogValidator, RecordBatch.ensureValid); one that matches
 * is stored as it came. kcat (librdkafka's producer, which computes its own CRCs) writes the
 * batches; their bytes are then produced raw with one record byte changed, with the CRC field
 * changed, and as they are; kcat reads back only what was accepted. On the mock this pins
 * testbed/mock-kafka/patch-produce-crc.pl (upstream stores any CRC: this test fails against
 * KAFKA_MIRROR_MOCK_UNPATCHED_PRODUCE_CRC=1's build); on real Kafka (KAFKA_TESTBED=real) it is
 * the broker's own behaviour.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { KafkaErrorCode } from "../../../lib/kafka/wire/error-codes.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { type KcatCompression, kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { dataOf, produceRaw, rawBatches } from "../../helpers/raw-batches.js";

describe("a produced batch's CRC (patch-produce-crc.pl)", () => {
  const started: TestKafka[] = [];
  after(async () => {
    for (const kafka of started) await kafka.stop();
  });

  for (const compression of ["none", "gzip"] satisfies KcatCompression[]) {
    it(`is checked, compression ${compression}: a changed byte or CRC is refused and not stored`, async () => {
      // Prepare: kcat writes three records to a source topic (one batch, or more when its
      // linger ends between them); the first batch is the one changed.
      const kafka = await startTestKafka({ brokers: 1 });
      started.push(kafka);
      const [source, target] = [`crc-src-${randomUUID()}`, `crc-dst-${randomUUID()}`];
      await kafka.createTopic(source, 1, 1);
      await kafka.createTopic(target, 1, 1);
      const records = ["a", "b", "c"].map((k) => ({ key: Buffer.from(k), value: Buffer.from(`value ${k}`) }));
      const config = { "linger.ms": "200" };
      await kcatProduce({
        brokers: kafka.bootstrapServers,
        topic: source,
        partition: 0,
        records,
        compression,
        config,
      });
      const batches = dataOf(await rawBatches(kafka.bootstrapServers, source));
      const [first] = batches;
      assert.ok(first, "kcat's batch");
      const tp = { topic: target, partition: 0 };
      const changedRecord = Buffer.from(first.bytes);
      changedRecord[changedRecord.length - 1] = (changedRecord[changedRecord.length - 1] ?? 0) ^ 0x01;
      const changedCrc = Buffer.from(first.bytes);
      changedCrc.writeUInt32BE((changedCrc.readUInt32BE(17) ^ 0x8000_0000) >>> 0, 17);

      // Act
      const changed = {
        record: await produceRaw(kafka.bootstrapServers, tp, changedRecord),
        crc: await produceRaw(kafka.bootstrapServers, tp, changedCrc),
      };
      const asTheyCame: number[] = [];
      for (const b of batches) asTheyCame.push(await produceRaw(kafka.bootstrapServers, tp, b.bytes));

      // Assess: only kcat's batches as they came are stored, and kcat reads their records back.
      const { CORRUPT_MESSAGE, NONE } = KafkaErrorCode;
      assert.deepEqual(changed, { record: CORRUPT_MESSAGE, crc: CORRUPT_MESSAGE });
      assert.deepEqual(
        asTheyCame,
        batches.map(() => NONE),
      );
      const stored = dataOf(await rawBatches(kafka.bootstrapServers, target));
      assert.deepEqual(
        stored.map((b) => b.bytes.readUInt32BE(17)),
        batches.map((b) => b.bytes.readUInt32BE(17)),
      );
      const read = await kcatRead({ brokers: kafka.bootstrapServers, topic: target, partition: 0 });
      assert.deepEqual(
        read.map((r) => [r.offset, r.key?.toString(), r.value?.toString()]),
        records.map((r, i) => [i, r.key.toString(), r.value.toString()]),
      );
    });
  }
});
