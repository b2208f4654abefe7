/**
 * Old-format sources: magic 0 and magic 1 message sets, plain, gzip, snappy and lz4 (librdkafka
 * writes v0 lz4 with the wrong header checksum of KIP-57, rdkafka_msgset_writer.c), written by an
 * independent producer (librdkafka through kcat, see test/helpers/legacy-kcat.ts), read by our
 * KafkaPartitionReader and copied by the CLI's `run --once` into v2 batches; `verify` compares both
 * sides, and kcat reads the target back. Regression: each of these partitions used to stop with
 * CORRUPT_BATCH ("unsupported message format v0/v1"). The compressed sets need the test broker's
 * patch-legacy-msgset.pl (test/integration/testbed/legacy-message-sets.test.ts pins it).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import type { MirrorRecord, SourceBatch } from "../../../lib/core/model.js";
import { DEFAULT_PROVENANCE_HEADER } from "../../../lib/core/provenance.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { NO_TIMESTAMP } from "../../../lib/kafka/codec/legacy-message-set.js";
import { decodeRecordBatches } from "../../../lib/kafka/codec/record-batch.js";
import { KafkaPartitionReader } from "../../../lib/kafka/read/source-reader.js";
import type { VerifyReport } from "../../../lib/verify/verify-mirror.js";
import { runCliCaptured, spawnCli } from "../../helpers/cli.js";
import { KCAT, type KcatRecord, kcatRead } from "../../helpers/kcat.js";
import {
  kcatProduceLegacy,
  LEGACY_CODEC_IDS,
  type LegacyMagic,
  rawLegacyEntries,
} from "../../helpers/legacy-kcat.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const LIMITS = { maxRecords: 1000, maxBytes: 1 << 20, maxWaitMs: 0 };
const COMPRESSIONS = ["none", "gzip", "snappy", "lz4"] as const;
const FORMATS = ([0, 1] as const).flatMap((magic) =>
  COMPRESSIONS.map((compression) => ({
    magic,
    compression,
    // Records per produce call: the test broker takes a v0 snappy/lz4 wrapper as the first set only.
    calls: magic === 0 && (compression === "snappy" || compression === "lz4") ? [10] : [6, 4],
  })),
);

interface Produced {
  readonly magic: LegacyMagic;
  readonly topic: string;
  readonly records: readonly KcatRecord[];
  /** Each record's timestamp as librdkafka's consumer reads it (kcat's %T). */
  readonly kcatTimestamps: readonly number[];
}

/** Binary keys and values, an empty value, a repeated key: what a copy must keep byte for byte. */
function records(count: number, tag: string): KcatRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    key: i === 3 ? Buffer.from(`${tag}-same`) : Buffer.concat([Buffer.from(`${tag}-${i}-`), randomBytes(5)]),
    value: i === 2 ? Buffer.alloc(0) : Buffer.concat([Buffer.from("value value value "), randomBytes(1 + i)]),
  }));
}

async function kcatTimestamps(brokers: readonly string[], topic: string): Promise<number[]> {
  const args = ["-C", "-q", "-e", "-b", brokers.join(","), "-t", topic, "-p", "0", "-o", "0", "-f", "%T\n"];
  const { stdout } = await promisify(execFile)(KCAT, args, { timeout: 60_000 });
  return stdout.trim().split("\n").map(Number);
}

/** The copy's records of one partition, in order, from offset 0 to the log end. */
async function readAll(reader: KafkaPartitionReader, topic: string, from = 0): Promise<MirrorRecord[]> {
  const out: MirrorRecord[] = [];
  for (let offset = from, end = from + 1; offset < end; ) {
    const fetched = await reader.fetch({ topic, partition: 0 }, offset, LIMITS);
    out.push(...fetched.records);
    end = fetched.highWatermark;
    if (fetched.nextOffset <= offset) break;
    offset = fetched.nextOffset;
  }
  return out;
}

/** The codec a produced topic was written in: its name says. */
function compressionOf(topic: string): (typeof COMPRESSIONS)[number] {
  const found = COMPRESSIONS.find((c) => topic.includes(`-${c.toUpperCase()}-`));
  assert.ok(found, topic);
  return found;
}

/** What the copy of a v0 record carries: Kafka's NO_TIMESTAMP; a v1 record keeps its own. */
function expectedTimestamp(p: Produced, i: number): number {
  return p.magic === 0 ? NO_TIMESTAMP : (p.kcatTimestamps[i] as number);
}

describe("old-format (magic 0/1) sources", () => {
  const suffix = randomUUID().slice(0, 8);
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  const produced: Produced[] = [];

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-legacy-"));
    for (const { magic, compression, calls } of FORMATS) {
      const topic = `LEGACY-V${magic}-${compression.toUpperCase()}-${suffix}`;
      await source.createTopic(topic, 1);
      const sets = calls.map((count, i) => records(count, `set${i}`));
      for (const set of sets) await kcatProduceLegacy(source, { magic, topic, compression, records: set });
      // The source really holds this format: checked on the stored bytes, not assumed.
      const entries = await rawLegacyEntries(source.bootstrapServers, topic);
      assert.ok(
        entries.every((e) => e.magic === magic && e.codec === LEGACY_CODEC_IDS[compression]),
        `${topic}: ${JSON.stringify(entries)}`,
      );
      assert.equal(entries.length, compression === "none" ? 10 : calls.length, topic);
      const timestamps = await kcatTimestamps(source.bootstrapServers, topic);
      produced.push({ magic, topic, records: sets.flat(), kcatTimestamps: timestamps });
    }
  });

  after(async () => {
    await stopLeaseServer(join(dir, "state"));
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("our reader returns each record's offset, key, value and timestamp, with no headers", async () => {
    const reader = new KafkaPartitionReader({ brokers: source.bootstrapServers });
    try {
      for (const p of produced) {
        const read = await readAll(reader, p.topic);
        assert.deepEqual(
          read,
          p.records.map((r, i) => ({ offset: i, timestamp: expectedTimestamp(p, i), ...r, headers: [] })),
          p.topic,
        );
        if (p.magic === 1)
          assert.ok(
            p.kcatTimestamps.every((t) => t > 1_600_000_000_000),
            p.topic,
          );
        // From inside a wrapper: the inner messages before the offset are dropped.
        assert.deepEqual(
          (await readAll(reader, p.topic, 7)).map((r) => r.offset),
          [7, 8, 9],
          p.topic,
        );
      }
    } finally {
      await reader.close();
    }
  });

  it("fetchBatches encodes them again as v2 source batches in their own codec, holding fetch's records", async () => {
    const reader = new KafkaPartitionReader({ brokers: source.bootstrapServers });
    try {
      for (const p of produced) {
        // Act
        const units: SourceBatch[] = [];
        for (let offset = 0; offset < p.records.length; ) {
          const fetched = await reader.fetchBatches({ topic: p.topic, partition: 0 }, offset, LIMITS);
          assert.ok(fetched.nextOffset > offset, `${p.topic}: no progress at ${offset}`);
          units.push(...fetched.batches);
          offset = fetched.nextOffset;
        }

        // Assess: each unit a v2 batch of the source's codec, its records those fetch returns.
        const fetched = await readAll(reader, p.topic);
        const copied: MirrorRecord[] = [];
        for (const unit of units) {
          const [batch, ...more] = await decodeRecordBatches(unit.bytes);
          assert.ok(batch && more.length === 0 && unit.bytes.readInt8(16) === 2, p.topic);
          assert.equal(unit.bytes.readInt16BE(21) & 0x07, LEGACY_CODEC_IDS[compressionOf(p.topic)], p.topic);
          assert.deepEqual([unit.count, unit.producerId], [batch.records.length, -1n], p.topic);
          const offsets = fetched.slice(copied.length, copied.length + unit.count).map((r) => r.offset);
          assert.deepEqual([unit.baseOffset, unit.lastOffset], [offsets[0], offsets.at(-1)], p.topic);
          copied.push(...batch.records);
        }
        const content = (rs: readonly MirrorRecord[]) => rs.map(({ offset: _, ...rest }) => rest);
        assert.deepEqual(content(copied), content(fetched), p.topic);
      }
    } finally {
      await reader.close();
    }
  });

  it("run --once copies them into v2 batches that verify and kcat find identical", async () => {
    // Prepare
    const config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      [
        "source:",
        `  brokers: ${source.bootstrapServers.join(",")}`,
        "target:",
        `  brokers: ${target.bootstrapServers.join(",")}`,
        "  requestTimeoutMs: 2000",
        "topics:",
        `  whitelist: "LEGACY-.*-${suffix}"`,
        "batch:",
        "  maxWaitMs: 100",
        "",
      ].join("\n"),
    );

    // Act
    const run = await spawnCli(["run", "--once", "--config", config, "--state-dir", join(dir, "state")]);

    // Assess
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const verify = await runCliCaptured(["verify", "--config", config, "--json"]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout) as VerifyReport;
    assert.deepEqual(
      report.partitions.map((c) => [c.source.topic, c.mismatch, c.sourceRecords, c.targetRecords]).sort(),
      produced.map((p) => [p.topic, null, 10, 10]).sort(),
    );
    const reader = new KafkaPartitionReader({ brokers: target.bootstrapServers });
    try {
      for (const p of produced) {
        const stored = await rawLegacyEntries(target.bootstrapServers, p.topic);
        assert.ok(
          stored.every((e) => e.magic === 2),
          `${p.topic}: the copy is v2`,
        );
        const copy = await readAll(reader, p.topic);
        assert.deepEqual(
          copy.map((r) => ({ ...r, headers: r.headers.map((h) => h.key.toString("latin1")) })),
          p.records.map((r, i) => ({
            offset: i,
            timestamp: expectedTimestamp(p, i),
            ...r,
            headers: [DEFAULT_PROVENANCE_HEADER],
          })),
          `${p.topic}: no headers but our provenance header`,
        );
        const theirs = await kcatRead({ brokers: target.bootstrapServers, topic: p.topic, partition: 0 });
        assert.deepEqual(
          theirs.map((r) => [r.offset, r.key, r.value]),
          p.records.map((r, i) => [i, r.key, r.value]),
          `${p.topic}: kcat on the target`,
        );
      }
    } finally {
      await reader.close();
    }
  });
});
