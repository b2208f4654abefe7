/**
 * A produced v2 batch whose CRC-32C does not match its bytes is refused with CORRUPT_MESSAGE (2)
 * and not stored, as Kafka's broker does (LogValidator, RecordBatch.ensureValid); one that matches
 * is stored as it came. kcat (librdkafka's producer, which computes its own CRCs) writes the
 * batches; the same bytes are then produced raw as they are, with one record byte changed, and
 * with the CRC field changed; kcat reads back only what was accepted. On the mock this pins
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
      // Prepare: kcat writes one batch of three records to a source topic.
      const kafka = await startTestKafka({ brokers: 1 });
      started.push(kafka);
      const [source, target] = [`crc-src-${randomUUID()}`, `crc-dst-${randomUUID()}`];
      await kafka.createTopic(source, 1, 1);
      await kafka.createTopic(target, 1, 1);
      const records = ["a", "b", "c"].map((k) => ({ key: Buffer.from(k), value: Buffer.from(`value ${k}`) }));
      await kcatProduce({
        brokers: kafka.bootstrapServers,
        topic: source,
        partition: 0,
        records,
        compression,
      });
      const [batch] = dataOf(await rawBatches(kafka.bootstrapServers, source));
      assert.ok(batch, "kcat's batch");
      const tp = { topic: target, partition: 0 };
      const changedRecord = Buffer.from(batch.bytes);
      changedRecord[changedRecord.length - 1] = (changedRecord[changedRecord.length - 1] ?? 0) ^ 0x01;
      const changedCrc = Buffer.from(batch.bytes);
      changedCrc.writeUInt32BE(changedCrc.readUInt32BE(17) ^ 0x8000_0000, 17);

      // Act
      const answers = {
        changedRecord: await produceRaw(kafka.bootstrapServers, tp, changedRecord),
        changedCrc: await produceRaw(kafka.bootstrapServers, tp, changedCrc),
        asItCame: await produceRaw(kafka.bootstrapServers, tp, batch.bytes),
      };

      // Assess: only the batch as kcat wrote it is stored, and kcat reads its records back.
      assert.deepEqual(answers, {
        changedRecord: KafkaErrorCode.CORRUPT_MESSAGE,
        changedCrc: KafkaErrorCode.CORRUPT_MESSAGE,
        asItCame: KafkaErrorCode.NONE,
      });
      const stored = dataOf(await rawBatches(kafka.bootstrapServers, target));
      assert.equal(stored.length, 1);
      assert.equal(stored[0]?.bytes.readUInt32BE(17), batch.bytes.readUInt32BE(17));
      const read = await kcatRead({ brokers: kafka.bootstrapServers, topic: target, partition: 0 });
      assert.deepEqual(
        read.map((r) => [r.offset, r.key?.toString(), r.value?.toString()]),
        records.map((r, i) => [i, r.key.toString(), r.value.toString()]),
      );
    });
  }
});
