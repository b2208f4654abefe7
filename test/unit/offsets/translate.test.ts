/**
 * Example cases of translateOffset next to its property test: the shapes an operator meets, in
 * target.copy "records" (provenance) and "batches" (copies matched to the source's batches).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SourceBatch, TopicPartition } from "../../../lib/core/model.js";
import type { OffsetMapPoint } from "../../../lib/core/ports.js";
import { encodeProvenance } from "../../../lib/core/provenance.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { translateOffset } from "../../../lib/offsets/translate.js";
import { recordsOf } from "../../helpers/fake-batches.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster, makeRecords } from "../../helpers/fake-cluster.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const tp: TopicPartition = { topic: "orders", partition: 0 };

/** What a translation waits for an open transaction on the target: up to 30 s of fake time. */
const WAIT_MS = 30_000;

/**
 * A target partition laid out slot by slot: a copy of source offset N, another source's record
 * ("B"), an offset without a record ("-": a marker, an aborted copy), or "(": another producer
 * opens a transaction there, left open (the LSO) until the test ends it.
 */
function world(layout: readonly (number | "B" | "-" | "(")[]) {
  const clock = new FakeClock();
  const cluster = new InMemoryCluster(clock);
  cluster.createTopic(tp.topic, 1);
  for (const slot of layout) {
    if (slot === "-") cluster.appendNonData(tp);
    if (slot === "(") cluster.openTransaction(tp);
    if (slot === "-" || slot === "(") continue;
    const [alias, offset] = slot === "B" ? ["B", 1_000] : ["A", slot];
    const value = encodeProvenance({ alias, partition: 0, offset });
    cluster.append(tp, [{ timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value }] }]);
  }
  const retry = { clock, deadline: () => clock.now() + WAIT_MS };
  const deps = { reader: cluster, admin: cluster, header: HEADER, sourceAlias: "A", retry };
  const translate = (map: OffsetMapPoint[], sourceOffset: number) =>
    translateOffset(deps, { source: tp, target: tp, map, sourceOffset });
  return Object.assign(translate, { clock, cluster });
}

describe("translateOffset", () => {
  it("starts at the nearest point below the offset, not one just above it", async () => {
    // target:      0  1  2  3  4  5  6  7
    const translate = world([0, 1, 2, 3, 4, 5, 6, 7]);
    const map = [
      { source: 0, target: 0, origin: true as const },
      { source: 5, target: 5 },
    ];
    assert.deepEqual(await translate(map, 4), {
      targetOffset: 4,
      nextSourceOffset: 4,
      copiedTo: 5,
      scanned: 5,
    });
  });

  it("steps over markers, aborted copies, other sources and uncopied source offsets", async () => {
    // target:      0  1    2    3  4    5
    const translate = world([0, "B", "-", 4, "B", 7]);
    const map = [{ source: 0, target: 0, origin: true as const }];
    assert.equal((await translate(map, 1)).targetOffset, 3); // 1..3 never copied: the copy of 4
    assert.equal((await translate(map, 5)).targetOffset, 5);
  });

  it("a group ahead of the mirror reads from right after the last copy", async () => {
    const translate = world([0, 1, "B", "B"]);
    const map = [
      { source: 0, target: 0, origin: true as const },
      { source: 2, target: 4 },
    ];
    const got = await translate(map, 9);
    assert.deepEqual(
      { ...got, scanned: 0 },
      { targetOffset: 2, nextSourceOffset: null, copiedTo: 2, scanned: 0 },
    );
  });

  it("refuses an offset below a map that does not start at the origin", async () => {
    const translate = world([0, 1, 2]);
    await assert.rejects(translate([{ source: 2, target: 2 }], 1), { code: "OFFSETS_UNTRANSLATABLE" });
    await assert.rejects(translate([], 1), /offset 1 cannot be translated exactly/);
  });
});

describe("translateOffset with another writer's transaction open below our copies", () => {
  const origin = [{ source: 0, target: 0, origin: true as const }];

  it("waits for the transaction to end and answers exactly (regression: it answered the LSO, as if nothing were copied past it)", async () => {
    // target:                  0  1    2  3  4: B's transaction is open from 2 (the LSO)
    const translate = world([0, 1, "(", "B", 2, 3]);
    const started = translate.clock.now();
    void translate.clock.sleep(3_000).then(() => translate.cluster.endTransaction(tp));

    const got = await translate(origin, 3);

    assert.deepEqual(got, { targetOffset: 4, nextSourceOffset: 3, copiedTo: 4, scanned: 5 });
    assert.ok(translate.clock.now() - started >= 3_000, "answered before the transaction ended");
  });

  it("fails naming the partition, the open transaction's offset and what ends it when it outlasts the deadline", async () => {
    const translate = world([0, 1, "(", "B", 2, 3]);
    const started = translate.clock.now();

    await assert.rejects(translate(origin, 3), (error: unknown) => {
      assert.ok(isReplicatorError(error, "TARGET_TRANSACTION_OPEN"), String(error));
      assert.equal(error.retryable, true);
      assert.match(error.message, /target orders\/0 has an open transaction at offset 2: /);
      assert.match(error.message, /transaction\.timeout\.ms/);
      assert.deepEqual([error.details.lastStableOffset, error.details.goal], [2, 5]);
      return true;
    });
    assert.ok(translate.clock.now() - started >= WAIT_MS - 1, "gave up before the deadline");
  });

  it("does not wait when the copy it looks for lies below the transaction", async () => {
    const translate = world([0, 1, "(", "B", 2, 3]);
    const started = translate.clock.now();

    assert.equal((await translate(origin, 1)).targetOffset, 1);
    assert.equal(translate.clock.now(), started);
  });

  it("does not wait for a transaction opened after it listed the end it must read to", async () => {
    const translate = world([0, 1, 2]);
    translate.cluster.hooks.beforeFetch = () => {
      translate.cluster.hooks = {};
      translate.cluster.openTransaction(tp);
      translate.cluster.append(tp, [{ timestamp: 0, key: null, value: null, headers: [] }]);
    };
    const started = translate.clock.now();

    const got = await translate(origin, 9);

    assert.deepEqual(
      { ...got, scanned: 0 },
      { targetOffset: 3, nextSourceOffset: null, copiedTo: 3, scanned: 0 },
    );
    assert.equal(translate.clock.now(), started);
  });
});

/** What our writes carry in the in-memory target (InMemoryCluster.producerIdOfWrites). */
const OURS = 7n;

/**
 * Batches mode: a source partition of batches of `sizes` records, and a target laid out write
 * by write: n, a write of ours copying the next n source batches as they come (one target batch
 * each, then its commit marker); "P" a plain producer's record; "T" a transactional producer's;
 * "=" a plain producer's batch equal to the next source batch; "-" an offset without a record;
 * "(" another producer opens a transaction there, left open until the test ends it.
 */
async function batchesWorld(
  sizes: readonly number[],
  layout: readonly (number | "P" | "T" | "=" | "-" | "(")[],
  beforeCopying: (source: InMemoryCluster) => void = () => {},
) {
  const clock = new FakeClock();
  const src = new InMemoryCluster(clock);
  const tgt = new InMemoryCluster(clock);
  src.createTopic(tp.topic, 1);
  tgt.createTopic(tp.topic, 1);
  for (const [i, size] of sizes.entries()) src.append(tp, makeRecords(size, i, 1_700_000_000_000 + i * 100));
  beforeCopying(src);
  const all = { maxRecords: 1_000_000, maxBytes: 1 << 30, maxWaitMs: 0 };
  let pos = 0;
  for (const slot of layout) {
    const next = (await src.fetchBatches(tp, pos, all)).batches;
    if (typeof slot === "number") {
      await tgt.write(tp, next.slice(0, slot));
      tgt.appendNonData(tp);
      pos = next[slot]?.baseOffset ?? (next.at(-1)?.lastOffset ?? pos - 1) + 1;
    }
    if (slot === "-") tgt.appendNonData(tp);
    if (slot === "(") tgt.openTransaction(tp);
    if (slot === "P" || slot === "T") tgt.append(tp, makeRecords(1, 99), slot === "P" ? -1n : 9n);
    if (slot === "=") tgt.append(tp, recordsOf(next[0] as SourceBatch), -1n);
  }
  const retry = { clock, deadline: () => clock.now() + WAIT_MS };
  const deps = { copy: "batches" as const, reader: tgt, admin: tgt, source: src, retry };
  const translate = (map: OffsetMapPoint[], sourceOffset: number, producerId?: bigint) =>
    translateOffset(deps, {
      source: tp,
      target: tp,
      map,
      sourceOffset,
      ...(producerId ? { producerId } : {}),
    });
  return Object.assign(translate, { clock, src, tgt });
}

describe("translateOffset in batches mode", () => {
  const origin = [{ source: 0, target: 0, origin: true as const }];

  it("counts into the copy of the batch that holds the offset, or begins the next one", async () => {
    // source batches: 0-2, 3-4, 5-8. target: copy 0-2, marker 3, P 4, copy 5-6, copy 7-10, marker 11
    const translate = await batchesWorld([3, 2, 4], [1, "P", 2]);

    assert.deepEqual(await translate(origin, 4), {
      targetOffset: 6,
      nextSourceOffset: 4,
      copiedTo: 5,
      scanned: 6,
    });
    assert.equal((await translate(origin, 0)).targetOffset, 0);
    assert.equal((await translate(origin, 3)).targetOffset, 5);
    assert.equal((await translate(origin, 8)).targetOffset, 10);
  });

  it("counts the records a batch kept after compaction by reading them", async () => {
    // source: one batch 0-3 with 1 and 2 compacted away, so encoded again (records 0 and 3)
    const translate = await batchesWorld([4], [1], (source) => source.compact(tp, 1, 3));

    assert.deepEqual(await translate(origin, 1), {
      targetOffset: 1,
      nextSourceOffset: 3,
      copiedTo: 4,
      scanned: 2,
    });
    assert.equal((await translate(origin, 3)).targetOffset, 1);
    assert.equal((await translate(origin, 0)).targetOffset, 0);
  });

  it("skips other producers' batches, a plain one equal to ours and a transactional one", async () => {
    // target: = 0-1, T 2, copy 3-4, marker 5, P 6, T 7, copy 8-9, marker 10
    const translate = await batchesWorld([2, 2], ["=", "T", 1, "P", "T", 1]);

    for (const producerId of [undefined, OURS]) {
      assert.equal((await translate(origin, 1, producerId)).targetOffset, 4);
      assert.equal((await translate(origin, 3, producerId)).targetOffset, 9);
    }
  });

  it("a group ahead of the mirror reads from right after the last copy, stepping back past a point after it", async () => {
    // target: copy 0-1, copy 2-3, marker 4, P 5, P 6; the lease's checkpoint (4, 7) after them
    const translate = await batchesWorld([2, 2, 3], [2, "P", "P"]);
    const map = [...origin, { source: 4, target: 7 }];

    assert.deepEqual(await translate(map, 5), {
      targetOffset: 4,
      nextSourceOffset: null,
      copiedTo: 4,
      scanned: 6,
    });
    assert.deepEqual(await translate(origin, 5), {
      targetOffset: 4,
      nextSourceOffset: null,
      copiedTo: 4,
      scanned: 6,
    });
  });

  it("fails naming both offsets when a copy is not its source batch (compacted since)", async () => {
    // target: copy 0-1, marker 2, copy 3-5 (of source 2-4), marker 6; then source offset 3 compacted
    const translate = await batchesWorld([2, 3], [1, 1]);
    translate.src.compact(tp, 3, 4);

    for (const producerId of [undefined, OURS]) {
      await assert.rejects(translate(origin, 4, producerId), (error: unknown) => {
        assert.ok(isReplicatorError(error, "TARGET_COPY_MISMATCH"), String(error));
        assert.match(
          error.message,
          /^target orders\/0 offset 3 holds a copy \(3 records\) that is not the source batch at orders\/0 offset 2 \(2 records\)/,
        );
        assert.deepEqual([error.details.targetOffset, error.details.sourceOffset], [3, 2]);
        return true;
      });
    }
  });

  it("finds a changed first copy past a point by the producer the step back learns", async () => {
    const translate = await batchesWorld([2, 3], [1, 1]);
    translate.src.compact(tp, 3, 4);
    const map = [...origin, { source: 2, target: 3 }];

    await assert.rejects(translate(map, 4), (error: unknown) => {
      assert.ok(isReplicatorError(error, "TARGET_COPY_MISMATCH"), String(error));
      assert.match(
        error.message,
        /offset 3 holds a batch of the mirror's producer that is not the copy of the source batch at orders\/0 offset 2/,
      );
      return true;
    });
    await assert.rejects(translate(map, 4, OURS), { code: "TARGET_COPY_MISMATCH" });
  });

  it("fails when a copy has no source batch left (the source log truncated)", async () => {
    const translate = await batchesWorld([2, 3], [1, 1]);
    translate.src.truncate(tp, 2);

    await assert.rejects(
      translate(origin, 4, OURS),
      /offset 3 holds a copy \(3 records\) that is no source batch: orders\/0 ends at offset 2/,
    );
  });

  it("refuses to count from a point whose source or target retention took", async () => {
    const sourceGone = await batchesWorld([2, 3], [1, 1]);
    sourceGone.src.deleteBefore(tp, 2);
    await assert.rejects(sourceGone(origin, 3), (error: unknown) => {
      assert.ok(isReplicatorError(error, "OFFSETS_UNTRANSLATABLE"), String(error));
      assert.match(error.message, /source orders\/0 no longer holds offset 0 \(retention/);
      return true;
    });
    const targetGone = await batchesWorld([2, 3], [1, 1]);
    targetGone.tgt.deleteBefore(tp, 3);
    await assert.rejects(
      targetGone(origin, 3),
      /target orders\/0 starts at offset 3 \(retention\), past offset 0/,
    );
    // A point at or past the target's log start counts from there.
    assert.equal((await targetGone([...origin, { source: 2, target: 3 }], 3)).targetOffset, 4);
  });

  it("waits for another writer's transaction below our copies, and only when it must read past it", async () => {
    // target: copy 0-1, marker 2, B's transaction open from 3 (P 3), copy 4-5, marker 6
    const ended = await batchesWorld([2, 2], [1, "(", "P", 1]);
    const started = ended.clock.now();
    void ended.clock.sleep(3_000).then(() => ended.tgt.endTransaction(tp));
    assert.equal((await ended(origin, 2)).targetOffset, 4);
    assert.ok(ended.clock.now() - started >= 3_000, "answered before the transaction ended");

    const open = await batchesWorld([2, 2], [1, "(", "P", 1]);
    assert.equal((await open(origin, 1)).targetOffset, 1);
    assert.equal(open.clock.now(), started);
    await assert.rejects(open(origin, 2), { code: "TARGET_TRANSACTION_OPEN" });
  });
});
