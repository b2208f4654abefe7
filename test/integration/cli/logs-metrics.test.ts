/**
 * The CLI's logs and metrics as an operator meets them, from the real bin: a time on every log
 * line, `--log-format json` lines with the functions' keys, `--json` failures as one JSON object,
 * `run --metrics-port` scraped while it copies, and a source outage folded into its first lines
 * and one "recovered after" line.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { CLI_BIN, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[(warn|error|info|debug)\] /;

/** A continuous `run`, its output as it comes, stopped with SIGINT. */
class RunningCli {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(args: readonly string[], cwd: string) {
    this.child = spawn(process.execPath, [CLI_BIN, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (c: Buffer) => {
      this.stdout += c.toString("utf8");
    });
    this.child.stderr?.on("data", (c: Buffer) => {
      this.stderr += c.toString("utf8");
    });
    this.exited = new Promise((resolve) => this.child.once("close", (code) => resolve(code)));
  }

  async waitFor(pattern: RegExp, stream: "stdout" | "stderr", timeoutMs: number): Promise<RegExpMatchArray> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const match = this[stream].match(pattern);
      if (match !== null) return match;
      if (Date.now() > until || this.child.exitCode !== null)
        assert.fail(`no ${pattern} on ${stream} in ${timeoutMs} ms:\n${this.stdout}\n${this.stderr}`);
      await sleep(100);
    }
  }

  async interrupt(): Promise<number | null> {
    this.child.kill("SIGINT");
    const killer = setTimeout(() => this.child.kill("SIGKILL"), 60_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(killer);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes a batch to every partition every `everyMs` until stopped; failures wait for the next turn. */
function keepProducing(
  source: MockKafka,
  topic: string,
  partitions: number,
  everyMs: number,
): () => Promise<void> {
  let stopped = false;
  const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
  const done = (async () => {
    for (let turn = 0; !stopped; turn++) {
      for (let p = 0; p < partitions; p++) {
        // makeRecords spaces timestamps 1 ms apart from its base: the newest one is now, not in
        // the future, where a copy within the spread would show a latency of 0.
        const records = makeRecords(50, p, Date.now() - 49).map((r, i) => ({ ...r, offset: turn * 50 + i }));
        await writer.write({ topic, partition: p }, records).catch(() => undefined);
      }
      await sleep(everyMs);
    }
  })();
  return async () => {
    stopped = true;
    await done;
    await writer.close();
  };
}

/** `perPartition` records in each partition, written before the run starts. */
async function backlog(
  source: MockKafka,
  topic: string,
  partitions: number,
  perPartition: number,
): Promise<void> {
  const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
  try {
    for (let p = 0; p < partitions; p++) {
      for (let from = 0; from < perPartition; from += 1_000) {
        const records = makeRecords(1_000, p, Date.now() - 999).map((r, i) => ({ ...r, offset: from + i }));
        await writer.write({ topic, partition: p }, records);
      }
    }
  } finally {
    await writer.close();
  }
}

function metricValues(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(name.length, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe("kafka-mirror logs and metrics", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-logs-"));
  });

  after(async () => {
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  async function configFor(whitelist: string, batchMaxBytes?: number): Promise<string> {
    const path = join(dir, `${randomUUID()}.yaml`);
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist,
    });
    const batch = batchMaxBytes === undefined ? "" : `\n  maxBytes: ${batchMaxBytes}`;
    await writeFile(path, yaml.replace("  maxWaitMs: 100", `  maxWaitMs: 100${batch}`));
    return path;
  }

  it("starts every log line with its time, and with --log-format json writes the functions' keys", async () => {
    const config = await configFor(`NOMATCH-${randomUUID()}`);
    const args = ["run", "--once", "--config", config, "--lease-store", "memory"];

    const text = await spawnCli(args, { cwd: dir, killAfterMs: 60_000 });
    const json = await spawnCli([...args, "--log-format", "json"], { cwd: dir, killAfterMs: 60_000 });

    assert.equal(text.code, 1, text.stderr);
    const logLines = text.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("kafka-mirror run:"));
    assert.ok(logLines.length > 0, text.stderr);
    for (const line of logLines) assert.match(line, ISO_TIME);
    assert.match(text.stderr, /\[warn\] the whitelist selects no topic/);

    assert.equal(json.code, 1, json.stderr);
    const objects = json.stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(objects.length > 0, json.stderr);
    for (const o of objects) {
      assert.deepEqual(Object.keys(o).slice(0, 4), ["level", "message", "timestamp", "service"]);
      assert.match(String(o.timestamp), /^\d{4}-\d\d-\d\dT/);
    }
    assert.ok(objects.some((o) => o.level === "WARN" && String(o.message).includes("selects no topic")));
    // run's own lines too ("mirroring with leases in", "done"): nothing but JSON for a log shipper.
    const stdoutLines = json.stdout.split("\n").filter((l) => l !== "");
    assert.ok(
      stdoutLines.some((l) => l.includes("mirroring with leases in")),
      json.stdout,
    );
    for (const line of stdoutLines)
      assert.equal((JSON.parse(line) as { level?: string }).level, "INFO", line);
  });

  it("prints a failure as one JSON object with --json", async () => {
    const missing = await spawnCli(["plan", "--json", "--config", join(dir, "missing.yaml")], { cwd: dir });
    const refused = await spawnCli(["run", "--json", "--once", "--dry-run", "--config", "x.yaml"], {
      cwd: dir,
    });

    assert.equal(missing.code, 2);
    const error = JSON.parse(missing.stderr) as Record<string, unknown>;
    assert.equal(error.exitCode, 2);
    assert.match(String(error.error), /cannot read config file .*missing\.yaml/);
    assert.equal(refused.code, 2);
    assert.match(
      String((JSON.parse(refused.stderr) as { error: string }).error),
      /run does not take --dry-run/,
    );
  });

  it("refuses a --metrics-port in use, naming it", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const config = await configFor(`BUSY-${randomUUID()}`);
      const run = await spawnCli(
        ["run", "--config", config, "--lease-store", "memory", "--metrics-port", String(port)],
        { cwd: dir, killAfterMs: 60_000 },
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`metrics port ${port} on 127\\.0\\.0\\.1 is in use`));
    } finally {
      busy.close();
    }
  });

  it("a run scraped at --metrics-port shows per-topic lag and latency changing while it copies", async () => {
    // Prepare
    const topic = `METRICS-${randomUUID()}`;
    await source.createTopic(topic, 2);
    const config = await configFor(topic, 4 * 1024);
    const stop = keepProducing(source, topic, 2, 200);
    const run = new RunningCli(
      ["run", "--config", config, "--lease-store", "memory", "--metrics-port", "0"],
      dir,
    );
    try {
      const [, url] = await run.waitFor(/metrics at (http:\S+)/, "stdout", 60_000);
      const scrape = async (): Promise<string> => {
        for (;;) {
          const text = await (await fetch(String(url))).text();
          if (text.includes(`kafka_mirror_lag_records{topic="${topic}"`)) return text;
          await sleep(100);
        }
      };
      const first = await scrape();

      // Act: a backlog while it runs, 40 source batches of 1,000 records, each fetched on its
      // own, so each copied batch leaves lag behind. The worker's next fetches are answered 3 s
      // late while it is written: it would otherwise copy each write as it lands (a held fetch
      // is answered when data arrives) and show no lag.
      const late = Array.from({ length: 3 }, () => ({ code: 0, rttMs: 3_000 }));
      await source.pushBrokerRequestErrors(1, ApiKey.Fetch, late);
      await backlog(source, topic, 2, 20_000);
      const lags: number[] = [];
      let second = first;
      for (const until = Date.now() + 30_000; Date.now() < until; await sleep(100)) {
        second = await scrape();
        lags.push(...metricValues(second, "kafka_mirror_lag_records").values());
        if (lags.some((v) => v > 0) && lags.at(-1) === 0 && lags.at(-2) === 0) break;
      }

      // Assess
      const records = (t: string) =>
        metricValues(t, "kafka_mirror_records_total").get(`{topic="${topic}"}`) ?? 0;
      assert.ok(records(second) > records(first), `${first}\n${second}`);
      const latency = (t: string) => [...metricValues(t, "kafka_mirror_replication_latency_ms").entries()];
      const lag = (t: string) => [...metricValues(t, "kafka_mirror_lag_records").entries()];
      assert.ok(latency(first).length === 2 && lag(first).length === 2, first);
      assert.notDeepEqual(latency(second), latency(first), "latency is measured batch by batch");
      assert.ok(
        lags.some((v) => v > 0),
        `the backlog never showed as lag: ${lags.slice(0, 40).join(" ")}`,
      );
      assert.ok(new Set(lags).size > 1, `lag never changed: ${lags.slice(0, 40).join(" ")}`);
      assert.match(second, /^kafka_mirror_partitions_held [12]$/m);
      assert.match(second, new RegExp(`^kafka_mirror_bytes_total\\{topic="${topic}"\\} \\d+`, "m"));
    } finally {
      await stop();
      assert.equal(await run.interrupt(), 130, run.stderr);
    }
  });

  it("folds a source outage into its first lines and one 'recovered after' line", async () => {
    // Prepare
    const topic = `OUTAGE-${randomUUID()}`;
    await source.createTopic(topic, 1);
    const config = await configFor(topic);
    let stop = keepProducing(source, topic, 1, 200);
    const run = new RunningCli(["run", "--config", config, "--lease-store", "memory"], dir);
    try {
      await run.waitFor(/mirroring with leases/, "stdout", 60_000);
      await sleep(3_000);
      await stop();

      // Act: 15 s without the source's only broker
      await source.brokerDown(1);
      await sleep(15_000);
      await source.brokerUp(1);
      stop = keepProducing(source, topic, 1, 200);
      await run.waitFor(/recovered after \d+ s \(\d+ failed attempts\)/, "stderr", 60_000);
    } finally {
      await stop();
      assert.equal(await run.interrupt(), 130, run.stderr);
    }

    // Assess
    const lines = run.stderr.split("\n").filter((l) => l !== "");
    assert.equal(lines.filter((l) => l.includes("recovered after")).length, 1, run.stderr);
    assert.ok(lines.length <= 20, `a flood of ${lines.length} lines:\n${run.stderr}`);
    for (const line of lines) assert.match(line, ISO_TIME);
  });
});
