/** Example cases of translateOffset next to its property test: the shapes an operator meets. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TopicPartition } from "../../../lib/core/model.js";
import type { OffsetMapPoint } from "../../../lib/core/ports.js";
import { encodeProvenance } from "../../../lib/core/provenance.js";
import { translateOffset } from "../../../lib/offsets/translate.js";
import { FakeClock, InMemoryCluster } from "../../helpers/fakes.js";

const HEADER = Buffer.from("kafka-mirror.provenance");
const tp: TopicPartition = { topic: "orders", partition: 0 };

function world(layout: readonly (number | "B" | "-")[]) {
  const cluster = new InMemoryCluster(new FakeClock());
  cluster.createTopic(tp.topic, 1);
  for (const slot of layout) {
    if (slot === "-") {
      cluster.appendNonData(tp);
      continue;
    }
    const [alias, offset] = slot === "B" ? ["B", 1_000] : ["A", slot];
    const value = encodeProvenance({ alias, partition: 0, offset });
    cluster.append(tp, [{ timestamp: 0, key: null, value: null, headers: [{ key: HEADER, value }] }]);
  }
  const deps = { reader: cluster, admin: cluster, header: HEADER, sourceAlias: "A" };
  return (map: OffsetMapPoint[], sourceOffset: number) =>
    translateOffset(deps, { source: tp, target: tp, map, sourceOffset });
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
