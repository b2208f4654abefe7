/**
 * `--lease-store memory`: the real bin copies everything with leases kept in its own process
 * (the lease store over the in-memory table), verify passes on the copy, and nothing of the
 * leases is left behind: no state directory, no lease server. Commands that would only see an
 * empty table refuse the option; those that keep no leases take it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import type { VerifyReport } from "../../../lib/verify/verify-mirror.js";
import { runCliCaptured, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const TOPIC = "USER-BI-TOPIC";
const PARTITIONS = 3;
const PER_PARTITION = 200;

describe("kafka-mirror run --lease-store memory", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let config: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-memory-"));
    config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      cliConfigYaml({ source: source.bootstrapServers, target: target.bootstrapServers, whitelist: TOPIC }),
    );
    await source.createTopic(TOPIC, PARTITIONS);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    try {
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const records = makeRecords(PER_PARTITION, partition).map((r, i) => ({ ...r, offset: i }));
        await writer.write({ topic: TOPIC, partition }, records);
      }
    } finally {
      await writer.close();
    }
  });

  after(async () => {
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("run --once copies every partition with leases in its own memory, leaving no state behind", async () => {
    const stateDir = join(dir, "state");

    const run = await spawnCli(
      ["run", "--once", "--config", config, "--lease-store", "memory", "--state-dir", stateDir],
      { cwd: dir, killAfterMs: 120_000 },
    );

    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /mirroring with leases in this process's memory/);
    assert.match(run.stdout, /done, 600 records from 3 partitions/);
    assert.equal(existsSync(stateDir), false, "no state directory");
    assert.equal(existsSync(join(dir, ".kafka-mirror")), false, "no default state directory either");
    const verify = await runCliCaptured(["verify", "--config", config, "--json"]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout) as VerifyReport;
    assert.equal(report.partitions.length, PARTITIONS);
    for (const p of report.partitions) {
      assert.equal(p.mismatch, null);
      assert.equal(p.targetRecords, PER_PARTITION);
    }
  });

  it("status, offsets and failover refuse it: their table would be a new, empty one", async () => {
    for (const args of [["status"], ["offsets"], ["failover", "--group", "g", "--dry-run"]]) {
      const result = await runCliCaptured([...args, "--config", config, "--lease-store", "memory"]);
      assert.equal(result.code, 2, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /--lease-store memory keeps leases inside one run's process/);
    }
  });

  it("plan, which never opens the lease table, takes it like any other kind", async () => {
    const result = await runCliCaptured(["plan", "--config", config, "--lease-store", "memory", "--json"]);

    assert.equal(result.code, 0, result.stdout + result.stderr);
  });
});
