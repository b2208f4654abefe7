/**
 * `npm run bench` at toy size, so the bench never rots: every stage runs against real local
 * clusters, the mirror's copy is verified record for record, and the final JSON line has the
 * documented shape. Timings are not asserted: this machine is shared and the sizes are tiny.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { assertRateHeld, type LatencyResult, parseBenchKey } from "../../../scripts/bench/latency.js";
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
      // Exercises the target's RTT on the way (the mock's brokers 1..3).
      "--target-rtt-ms",
      "2",
      "--warmup-records",
      "600",
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
    assert.equal(line.achieved_rps, Math.round(result.latency.producedRate));
    const numbers = ["mirror_rps", "kcat_rps", "ratio", "p50_ms", "p99_ms", "rss_mb", "achieved_rps"];
    for (const key of [...numbers, "cpu_s_per_gib", "cpu_s_per_gib_second_half", "kcat_cpu_s_per_gib"]) {
      assert.ok(typeof line[key] === "number" && (line[key] as number) > 0, `${key} is a positive number`);
    }
    const half = result.mirror.secondHalf;
    assert.ok(
      half !== null && half.bytes > 0 && half.bytes * 2 <= result.mirror.bytes,
      "the copy's second half",
    );
    assert.ok(half.cpuMs > 0 && half.cpuMs < result.mirror.cpuMs, "the half's CPU, in the run's unit");
    assert.match(formatTable(result), /kafka-mirror run --once/);
    // On the release the functions run (nodejs22.x, infra/replicator-function.ts), not this Node.
    assert.match(String(line.worker_node), /^v22\./);
    assert.match(formatTable(result), /worker on Node v22\.\d+\.\d+ \(the functions' release\)/);
    // The copy claims its leases and checkpoints at its end at least. A write is billed a unit or
    // more, as dynalite's answers say: a meter that read no answer would count none.
    const { dynamodb } = result.mirror;
    assert.ok(
      dynamodb.writes > 0 && dynamodb.writeUnits >= dynamodb.writes,
      "the lease store's writes were metered",
    );
    const gib = result.mirror.bytes / 2 ** 30;
    assert.equal(line.dynamodb_write_units_per_gib, Math.round((dynamodb.writeUnits / gib) * 10) / 10);
    assert.equal(line.warmup_records, 600, "the worker copied the warm-up topic first");
    assert.match(formatTable(result), /had copied 600 warm-up records first/);
  });

  it("warms up with the measured copy's own replicator (--warmup-shared), the measured data written after", async () => {
    const options = parseBenchOptions(
      [
        "--records",
        "2000",
        "--partitions",
        "2",
        "--record-bytes",
        "200",
        "--source-batch-bytes",
        "65536",
      ].concat(
        ["--skip-kcat", "--skip-latency", "--warmup-records", "400", "--warmup-shared"],
        ["--worker-node", "current"],
      ),
    );

    const result = await runBench(options, () => undefined);

    // The worker's second copy found only the data written after its go-ahead.
    assert.equal(result.mirror.warmupRecords, 400);
    assert.equal(result.mirror.records, 2000);
    assert.equal(result.mirror.verified, true);
    assert.equal(summarize(result).warmup_shared, true);
    assert.equal(summarize(result).worker_node, process.version, "--worker-node current");
  });

  it("refuses unknown and malformed options, naming them", () => {
    assert.throws(() => parseBenchOptions(["--recrods", "5"]), /unknown option --recrods/);
    assert.throws(() => parseBenchOptions(["--rate", "fast"]), /--rate needs a positive integer, got fast/);
    assert.throws(() => parseBenchOptions(["--kafka", "msk"]), /--kafka needs mock or real, got msk/);
    assert.throws(() => parseBenchOptions(["--copy", "bytes"]), /--copy needs records or batches, got bytes/);
    assert.equal(parseBenchOptions(["--copy", "batches"]).copy, "batches");
    assert.equal(parseBenchOptions([]).workerNode, "functions");
    assert.throws(
      () => parseBenchOptions(["--worker-node", "20"]),
      /--worker-node needs functions or current, got 20/,
    );
    assert.equal(parseBenchOptions([]).targetCompression, "none");
    assert.equal(parseBenchOptions(["--target-compression", "zstd"]).targetCompression, "zstd");
    assert.throws(
      () => parseBenchOptions(["--target-compression", "brotli"]),
      /--target-compression needs one of none, gzip, snappy, lz4, zstd, got brotli/,
    );
    assert.equal(parseBenchOptions(["--target-rtt-ms", "20"]).targetRttMs, 20);
    assert.throws(
      () => parseBenchOptions(["--kafka", "real", "--target-rtt-ms", "20"]),
      /--target-rtt-ms applies to the mock bench only/,
    );
    assert.throws(() => parseBenchOptions(["--brokers", "3"]), /--brokers applies to --kafka real only/);
    assert.equal(parseBenchOptions(["--warmup-records", "0"]).warmupRecords, 0);
    assert.throws(() => parseBenchOptions(["--warmup-shared"]), /--warmup-shared needs --warmup-records/);
    assert.throws(
      () => parseBenchOptions(["--warmup-records", "-1"]),
      /--warmup-records needs an integer >= 0, got -1/,
    );
    assert.throws(
      () => parseBenchOptions(["--kafka", "real", "--warmup-records", "5"]),
      /--warmup-records applies to the mock bench only/,
    );
    assert.throws(
      () => parseBenchOptions(["--kafka", "real", "--brokers", "2"]),
      /--brokers needs 1 or 3, got 2/,
    );
    assert.throws(
      () => parseBenchOptions(["--kafka", "real", "--skip-kcat"]),
      /apply to the mock bench only/,
    );
    assert.deepEqual(parseBenchOptions([]), DEFAULT_OPTIONS);
    assert.equal(parseBenchOptions(["--kafka", "real", "--brokers", "3"]).brokers, 3);
  });

  // Regression: a producer that fell behind (8,139 of 10,000 records/s on a slow VM) made the
  // bench report a p99 of 6-8 s that measured the producer's own queue.
  it("fails a latency run whose producer could not hold the rate asked", () => {
    const run = (producedRate: number): LatencyResult => ({
      produced: 200_000,
      received: 200_000,
      producedRate,
      p50Ms: 3000,
      p99Ms: 7000,
      maxMs: 8000,
    });

    assert.throws(
      () => assertRateHeld(run(8139), 10_000, "latency run"),
      /latency run: the producer reached 8139 of the 10000 records\/s asked \(81%, below 95%\)/,
    );
    assert.doesNotThrow(() => assertRateHeld(run(9_600), 10_000, "latency run"));
  });

  it("reads the bench's keys from their bytes, and nothing else as one", () => {
    assert.deepEqual(parseBenchKey(Buffer.from("k7-123456")), { partition: 7, sequence: 123456 });
    for (const other of ["nudge", "k7-", "k-1", "k7x-1", "x7-1", "k7-1a"]) {
      assert.equal(parseBenchKey(Buffer.from(other)), null, other);
    }
  });
});
