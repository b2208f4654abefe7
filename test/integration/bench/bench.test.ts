/**
 * `npm run bench` at toy size, so the bench never rots: every stage runs against real local
 * clusters, the mirror's copy is verified record for record, and the final JSON line has the
 * documented shape. Timings are not asserted: this machine is shared and the sizes are tiny.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_OPTIONS, parseBenchOptions } from "../../../scripts/bench/options.js";
import { formatTable, summarize } from "../../../scripts/bench/report.js";
import { runBench } from "../../../scripts/bench/run.js";

describe("npm run bench (tiny)", () => {
  it("copies and verifies every record, and prints the JSON line", async () => {
    // Prepare
    const options = parseBenchOptions([
      "--records",
      "3000",
      "--partitions",
      "3",
      "--record-bytes",
      "200",
      "--source-batch-bytes",
      "65536",
      "--rate",
      "500",
      "--latency-seconds",
      "2",
    ]);

    // Act
    const result = await runBench(options, () => undefined);
    const summary = summarize(result);
    const line = JSON.parse(JSON.stringify(summary)) as Record<string, unknown>;

    // Assess
    assert.deepEqual(Object.keys(line).slice(0, 7), [
      "records",
      "mirror_rps",
      "kcat_rps",
      "ratio",
      "p50_ms",
      "p99_ms",
      "rss_mb",
    ]);
    assert.equal(line.records, 3000);
    assert.equal(result.mirror.copied, 3000);
    assert.equal(result.mirror.records, 3000);
    assert.equal(result.mirror.verified, true);
    assert.equal(result.kcat?.copied, 3000);
    assert.ok(result.latency !== null && result.latency.produced === 1000);
    assert.equal(result.latency.received, result.latency.produced);
    for (const key of ["mirror_rps", "kcat_rps", "ratio", "p50_ms", "p99_ms", "rss_mb"]) {
      assert.ok(typeof line[key] === "number" && (line[key] as number) > 0, `${key} is a positive number`);
    }
    assert.match(formatTable(result), /kafka-mirror run --once/);
  });

  it("refuses unknown and malformed options, naming them", () => {
    assert.throws(() => parseBenchOptions(["--recrods", "5"]), /unknown option --recrods/);
    assert.throws(() => parseBenchOptions(["--rate", "fast"]), /--rate needs a positive integer, got fast/);
    assert.deepEqual(parseBenchOptions([]), DEFAULT_OPTIONS);
  });
});
