// The test broker stores old-format (magic 0 and 1) message sets from librdkafka (kcat) as Kafka's
// LogValidator does on a topic with message.format.version < 0.11: uncompressed messages one
// offset each (upstream already did this), and gzip wrapper messages (upstream refused them with
// UNSUPPORTED_VERSION; testbed/mock-kafka/patch-legacy-msgset.pl) with the wrapper's offset the
// last inner message's, v1 inner offsets left relative and v0 inner offsets made absolute.
// Only independent parts: kcat writes and reads, the stored bytes are parsed with node:zlib.
// Against a build without the patch (KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY=1, see
// scripts/testbed/build-mock-kafka.sh) the gzip tests fail: kcat's deliveries are refused.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { kcatRead } from "../../helpers/kcat.js";
import { kcatProduceLegacy, type LegacyMagic, rawLegacyEntries } from "../../helpers/legacy-kcat.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

function records(count: number, tag: string) {
  return Array.from({ length: count }, (_, i) => ({
    key: Buffer.concat([Buffer.from(`${tag}-${i}-`), randomBytes(4)]),
    value: Buffer.concat([Buffer.from("payload payload payload "), randomBytes(i % 7)]),
  }));
}

describe("test bed: legacy message sets from librdkafka", () => {
  // One cluster per format: MsgVersion 1 needs the whole cluster limited to Produce v2.
  const clusters = new Map<LegacyMagic, MockKafka>();

  before(async () => {
    for (const magic of [0, 1] as const) clusters.set(magic, await startMockKafka({ brokers: 1 }));
  });

  after(async () => {
    await Promise.allSettled([...clusters.values()].map((c) => c.stop()));
  });

  for (const magic of [0, 1] as const) {
    for (const gzip of [false, true]) {
      it(`stores v${magic} ${gzip ? "gzip wrappers" : "plain messages"} with Kafka's offsets`, async () => {
        // Prepare
        const kafka = clusters.get(magic);
        assert.ok(kafka);
        const topic = `legacy-v${magic}-${gzip ? "gzip" : "none"}-${randomUUID()}`;
        await kafka.createTopic(topic, 1);
        const first = records(6, "a");
        const second = records(4, "b");

        // Act: two produce calls, so the second set's offsets start past the first's.
        await kcatProduceLegacy(kafka, { magic, topic, gzip, records: first });
        await kcatProduceLegacy(kafka, { magic, topic, gzip, records: second });

        // Assess: the stored entries
        const entries = await rawLegacyEntries(kafka.bootstrapServers, topic);
        assert.ok(
          entries.every((e) => e.magic === magic && e.codec === (gzip ? 1 : 0) && e.crcValid),
          JSON.stringify(entries),
        );
        if (gzip) {
          assert.deepEqual(
            entries.map((e) => [e.offset, e.innerOffsets]),
            magic === 1
              ? [
                  [5, [0, 1, 2, 3, 4, 5]],
                  [9, [0, 1, 2, 3]],
                ]
              : [
                  [5, [0, 1, 2, 3, 4, 5]],
                  [9, [6, 7, 8, 9]],
                ],
          );
        } else {
          assert.deepEqual(
            entries.map((e) => e.offset),
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
          );
        }
        // ... and what librdkafka's consumer makes of them.
        const read = await kcatRead({ brokers: kafka.bootstrapServers, topic, partition: 0 });
        assert.deepEqual(
          read.map((r) => [r.offset, r.key, r.value]),
          [...first, ...second].map((r, i) => [i, r.key, r.value]),
        );
      });
    }
  }
});
