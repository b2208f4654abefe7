/**
 * verify in target.copy "batches": each source batch against the target's next data batch, by
 * record count, content CRC and largest timestamp; the first difference named by both offsets
 * and classified as in records mode; the same summary.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatVerify } from "../../../lib/cli/commands/verify.js";
import type { MirrorRecord, SourceBatch, TopicPartition } from "../../../lib/core/model.js";
import { createTopicSelector } from "../../../lib/topics/selection.js";
import { comparePartition } from "../../../lib/verify/compare-partition.js";
import { verifyMirror } from "../../../lib/verify/verify-mirror.js";
import { recordsOf } from "../../helpers/fake-batches.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";

const TP: TopicPartition = { topic: "BIN-BI-TOPIC", partition: 0 };
const ALL = { maxRecords: 1_000_000, maxBytes: 1 << 30, maxWaitMs: 0 };
const OURS = 7n;
const batches = { copy: "batches" as const };

/**
 * What the target gets for each source batch in order: its copy; another producer's record, then
 * the copy; or batches of our producer made of the records given (none: nothing).
 */
type Copying = (
  batch: SourceBatch,
  index: number,
) => "copy" | "foreign, copy" | readonly (readonly MirrorRecord[])[];

/**
 * Source batches of `sizes` records (gaps compacted into some by `compact`), and a target that
 * got each as `copying` says, one write of ours each, a commit marker after every write.
 */
async function clusters(
  sizes: readonly number[],
  copying: Copying = () => "copy",
  compact?: [number, number],
) {
  const clock = new FakeClock();
  const source = new InMemoryCluster(clock);
  const target = new InMemoryCluster(clock);
  source.createTopic(TP.topic, 1);
  target.createTopic(TP.topic, 1);
  for (const [i, size] of sizes.entries())
    source.append(TP, makeRecords(size, i, 1_700_000_000_000 + i * 100));
  if (compact !== undefined) source.compact(TP, ...compact);
  for (const [i, batch] of (await source.fetchBatches(TP, 0, ALL)).batches.entries()) {
    const what = copying(batch, i);
    if (what === "foreign, copy") target.append(TP, makeRecords(1, 9), 9n);
    if (what === "copy" || what === "foreign, copy") await target.write(TP, [batch]);
    else for (const records of what) target.append(TP, records, OURS);
    const wrote = what === "copy" || what === "foreign, copy" || what.length > 0;
    if (wrote) target.appendNonData(TP);
  }
  return {
    source: { reader: source, admin: source },
    target: { reader: target, admin: target },
    cluster: target,
  };
}

const compare = async (world: Awaited<ReturnType<typeof clusters>>) =>
  comparePartition(world.source, world.target, TP, TP, batches);

describe("comparePartition in batches mode", () => {
  it("finds copies identical, a batch kept with compaction gaps included, with counts and digests", async () => {
    const result = await compare(await clusters([3, 4, 2], () => "copy", [4, 6]));

    assert.equal(result.mismatch, null);
    assert.deepEqual([result.sourceRecords, result.targetRecords], [7, 7]);
    assert.equal(result.sourceDigest, result.targetDigest);
    assert.deepEqual(
      [result.sourceRange, result.targetRange],
      [
        { from: 0, to: 9 },
        { from: 0, to: 10 },
      ],
    );
  });

  it("reports an altered batch at both offsets, saying what differs", async () => {
    const value = (records: readonly MirrorRecord[]) =>
      records.map((r, i) => (i === 1 ? { ...r, value: Buffer.from([0x00]) } : r));
    const world = await clusters([3, 4, 2], (b, i) => (i === 1 ? [value(recordsOf(b))] : "copy"));

    const { mismatch, sourceDigest, targetDigest } = await compare(world);

    assert.deepEqual([mismatch?.kind, mismatch?.sourceOffset, mismatch?.targetOffset], ["altered", 3, 4]);
    assert.notEqual(sourceDigest, targetDigest);
    assert.equal(
      mismatch?.message,
      "BIN-BI-TOPIC/0: source batch at offset 3 differs from target batch at offset 4: content CRC",
    );
  });

  it("names a changed largest timestamp, and a copy split in two that records mode would pass", async () => {
    const later = (records: readonly MirrorRecord[]) =>
      records.map((r) => ({ ...r, timestamp: r.timestamp + 1 }));
    const timed = await clusters([3, 4], (b, i) => (i === 1 ? [later(recordsOf(b))] : "copy"));
    assert.match(
      (await compare(timed)).mismatch?.message ?? "",
      /: content CRC, max timestamp 1700000000103 against 1700000000104$/,
    );

    const split = await clusters([3, 4], (b, i) =>
      i === 1 ? [recordsOf(b).slice(0, 2), recordsOf(b).slice(2)] : "copy",
    );
    assert.match(
      (await compare(split)).mismatch?.message ?? "",
      /offset 3 differs from target batch at offset 4: 4 records against 2/,
    );
    assert.equal((await comparePartition(split.source, split.target, TP, TP)).mismatch, null);
  });

  it("reports a batch missing in the middle by its source offset, and missing ones at the end", async () => {
    const middle = await clusters([3, 4, 2], (_, i) => (i === 1 ? [] : "copy"));
    const { mismatch } = await compare(middle);
    assert.deepEqual([mismatch?.kind, mismatch?.sourceOffset], ["missing", 3]);
    assert.match(mismatch?.message ?? "", /target offset 4 holds the copy of source batch at offset 7\)$/);

    const end = await clusters([3, 4, 2], (_, i) => (i === 2 ? [] : "copy"));
    assert.equal(
      (await compare(end)).mismatch?.message,
      "BIN-BI-TOPIC/0: source batch at offset 7 and later are missing from the target",
    );
  });

  it("reports a batch copied twice at the second copy's target offset", async () => {
    const world = await clusters([3, 4, 2], (b, i) => (i === 1 ? [recordsOf(b), recordsOf(b)] : "copy"));

    const { mismatch } = await compare(world);

    assert.deepEqual([mismatch?.kind, mismatch?.sourceOffset, mismatch?.targetOffset], ["duplicated", 3, 8]);
  });

  it("names another producer's batch among the copies, and one past them", async () => {
    const world = await clusters([3, 4]);
    world.cluster.append(TP, makeRecords(1, 9), 9n);
    const extra = (await compare(world)).mismatch;
    assert.deepEqual([extra?.kind, extra?.targetOffset], ["extra", 9]);
    assert.match(
      extra?.message ?? "",
      /no counterpart in the source \(written by producer 9, the copies before it by 7\)$/,
    );

    const among = await clusters([3, 4], (_, i) => (i === 1 ? "foreign, copy" : "copy"));
    const altered = (await compare(among)).mismatch;
    assert.deepEqual([altered?.kind, altered?.sourceOffset, altered?.targetOffset], ["altered", 3, 4]);
    assert.match(
      altered?.message ?? "",
      /: 4 records against 1, content CRC, max timestamp .* \(written by producer 9, the copies before it by 7\)$/,
    );
  });
});

describe("verifyMirror in batches mode", () => {
  it("compares batch by batch when told the copy mode, and prints the same summary", async () => {
    const world = await clusters([3, 4, 2]);
    const mapping = createTopicSelector({ whitelist: TP.topic, rename: "identity", sourceAlias: "s" });

    const report = await verifyMirror({
      source: world.source,
      target: world.target,
      mapping,
      copy: "batches",
    });

    assert.equal(report.ok, true);
    assert.match(formatVerify(report), /verify: OK, 9 records in 1 partitions identical$/);
    const split = await clusters([3, 4], (b, i) =>
      i === 1 ? [recordsOf(b).slice(0, 2), recordsOf(b).slice(2)] : "copy",
    );
    const both = { source: split.source, target: split.target, mapping };
    assert.equal((await verifyMirror(both)).ok, true);
    const failed = await verifyMirror({ ...both, copy: "batches" });
    assert.match(formatVerify(failed), /first mismatch: BIN-BI-TOPIC\/0: source batch at offset 3 differs/);
    assert.match(formatVerify(failed), /verify: FAILED, 1 mismatch\(es\) in 1 partitions compared$/);
  });
});
