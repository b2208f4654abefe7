/**
 * `plan`'s text: every drift the JSON carries has a line a reader can act on, the target
 * compression.type that would recompress our batches among them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type PlannedTopic, renderPlan } from "../../../../lib/cli/commands/plan.js";

const topic: PlannedTopic = {
  source: "orders",
  target: "site-a.orders",
  partitions: 8,
  targetPartitions: 8,
  action: "ok",
  configChanges: [],
  targetOnly: [],
  unsynced: [],
  recompressedAs: null,
};

describe("plan text", () => {
  it("names a target compression.type that makes the broker recompress target.compression's batches", () => {
    const text = renderPlan([{ ...topic, recompressedAs: "gzip" }], true, "zstd");

    assert.match(
      text,
      /site-a\.orders: compression\.type=gzip makes its broker recompress the zstd batches we send \(target\.compression\); set it to zstd or producer/,
    );
  });

  it("prints no configs section for a topic in sync that keeps our codec", () => {
    const text = renderPlan([topic], true, "zstd");

    assert.doesNotMatch(text, /configs:|recompress/);
    assert.match(text, /in sync: nothing to create, grow or set/);
  });

  it("lists changes, target-only settings and settings not copied, each with its topic", () => {
    const text = renderPlan(
      [
        {
          ...topic,
          configChanges: [{ name: "retention.ms", from: null, to: "86400000" }],
          targetOnly: ["min.insync.replicas"],
          unsynced: [{ name: "segment.bytes", source: "1048576", target: null, why: "on the deny list" }],
        },
      ],
      false,
      "none",
    );

    assert.match(text, /site-a\.orders: set retention\.ms \(unset\) -> 86400000/);
    assert.match(text, /site-a\.orders: keep min\.insync\.replicas \(target only\)/);
    assert.match(text, /site-a\.orders: not copied segment\.bytes=1048576 \(on the deny list\)/);
    assert.doesNotMatch(text, /in sync/);
  });
});
