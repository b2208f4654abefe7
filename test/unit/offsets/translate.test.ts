/** Example cases of translateOffset next to its property test: the shapes an operator meets. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import type { OffsetMapPoint } from "../../../lib/core/ports.js";
import { encodeProvenance } from "../../../lib/core/provenance.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { translateOffset } from "../../../lib/offsets/translate.js";
import { FakeClock } from "../../helpers/fake-clock.js";
import { InMemoryCluster } from "../../helpers/fake-cluster.js";

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
