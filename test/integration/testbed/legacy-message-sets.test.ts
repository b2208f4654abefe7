// The test broker stores old-format (magic 0 and 1) message sets from librdkafka (kcat) as Kafka's
// LogValidator does on a topic with message.format.version < 0.11: uncompressed messages one
// offset each (upstream already did this), and gzip, snappy and lz4 wrapper messages (upstream
// refused them with UNSUPPORTED_VERSION; testbed/mock-kafka/patch-legacy-msgset.pl) with the
// wrapper's offset the last inner message's, v1 inner offsets left relative and v0 inner offsets
// made absolute (a v0 snappy/lz4 wrapper only where they already are: the partition's first set).
// Only independent parts: kcat writes and reads, the stored bytes are parsed with node:zlib.
// Against a build without the patch (KAFKA_MIRROR_MOCK_UNPATCHED_LEGACY=1, see
// scripts/testbed/build-mock-kafka.sh) the compressed tests fail: kcat's deliveries are refused.
import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { kcatRead } from "../../helpers/kcat.js";
import {
  kcatProduceLegacy,
  LEGACY_CODEC_IDS,
  type LegacyMagic,
  rawLegacyEntries,
} from "../../helpers/legacy-kcat.js";
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
    for (const compression of ["none", "gzip", "snappy", "lz4"] as const) {
      // A v0 snappy/lz4 wrapper is not recompressed: only a first produce (offsets from 0) fits.
      const calls = magic === 0 && (compression === "snappy" || compression === "lz4") ? [10] : [6, 4];
      it(`stores v${magic} ${compression} message sets with Kafka's offsets (${calls.length} produce calls)`, async () => {
        // Prepare
        const kafka = clusters.get(magic);
        assert.ok(kafka);
        const topic = `legacy-v${magic}-${compression}-${randomUUID()}`;
        await kafka.createTopic(topic, 1);
        const sets = calls.map((count, i) => records(count, `set${i}`));

        // Act: with two calls, the second set's offsets start past the first's.
        for (const set of sets) await kcatProduceLegacy(kafka, { magic, topic, compression, records: set });

        // Assess: the stored entries
        const entries = await rawLegacyEntries(kafka.bootstrapServers, topic);
        assert.ok(
          entries.every((e) => e.magic === magic && e.codec === LEGACY_CODEC_IDS[compression] && e.crcValid),
          JSON.stringify(entries),
        );
        const ends = calls.map((_, i) => calls.slice(0, i + 1).reduce((a, b) => a + b) - 1);
        assert.deepEqual(
          entries.map((e) => e.offset),
          compression === "none" ? [...Array(10).keys()] : ends,
        );
        if (compression === "gzip") {
          assert.deepEqual(
            entries.map((e) => e.innerOffsets),
            magic === 1
              ? [
                  [0, 1, 2, 3, 4, 5],
                  [0, 1, 2, 3],
                ]
              : [
                  [0, 1, 2, 3, 4, 5],
                  [6, 7, 8, 9],
                ],
          );
        }
        // ... and what librdkafka's consumer makes of them.
        const read = await kcatRead({ brokers: kafka.bootstrapServers, topic, partition: 0 });
        assert.deepEqual(
          read.map((r) => [r.offset, r.key, r.value]),
          sets.flat().map((r, i) => [i, r.key, r.value]),
        );
      });
    }
  }
});
