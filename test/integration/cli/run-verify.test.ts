/**
 * The CLI against two local clusters (the mock or real Kafka, KAFKA_TESTBED) and its embedded
 * lease store: two `run --once`
 * processes share the partitions, `verify` passes on their copy and catches an altered, a
 * missing and a duplicated record, and `status` agrees with the lease table and the offsets.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { StatusRow } from "../../../lib/cli/status-rows.js";
import type { MirrorRecord, TopicPartition } from "../../../lib/core/model.js";
import { createEmbeddedLeaseClient } from "../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { DynamoDbLeaseStore } from "../../../lib/dynamodb/lease-store.js";
import { KafkaClusterAdmin } from "../../../lib/kafka/admin/cluster-admin.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import type { VerifyReport } from "../../../lib/verify/verify-mirror.js";
import { runCliCaptured, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { codecIdOf, dataOf, rawBatches } from "../../helpers/raw-batches.js";

const MIRRORED = ["BIN-BI-TOPIC", "PUSH-BI-TOPIC"] as const;
const PARTITIONS = 4;
const PER_PARTITION = 300;

function records(count: number, tag: number): MirrorRecord[] {
  return makeRecords(count, tag).map((r, i) => ({ ...r, offset: i }));
}

const cli = runCliCaptured;

describe("kafka-mirror run, verify and status", () => {
  let source: TestKafka;
  let target: TestKafka;
  let dir: string;
  let stateDir: string;
  let sourceWriter: KafkaPartitionWriter;
  let targetWriter: KafkaPartitionWriter;

  const configFile = async (
    name: string,
    whitelist: string,
    copy?: "batches",
    compression?: string,
  ): Promise<string> => {
    const path = join(dir, name);
    await writeFile(
      path,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: target.bootstrapServers,
        whitelist,
        ...(copy === undefined ? {} : { copy }),
        ...(compression === undefined ? {} : { compression }),
      }),
    );
    return path;
  };

  before(async () => {
    [source, target] = await Promise.all([startTestKafka({ brokers: 1 }), startTestKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-"));
    stateDir = join(dir, "state");
    sourceWriter = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    targetWriter = new KafkaPartitionWriter({ brokers: target.bootstrapServers });
    for (const topic of [...MIRRORED, "SCRIPT-BI-TOPIC"]) {
      await source.createTopic(topic, PARTITIONS);
      for (let p = 0; p < PARTITIONS; p++)
        await sourceWriter.write({ topic, partition: p }, records(PER_PARTITION, p));
    }
  });

  after(async () => {
    await Promise.allSettled([sourceWriter?.close(), targetWriter?.close()]);
    await stopLeaseServer(stateDir);
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("two run --once processes share the embedded store, and verify passes on their copy", async () => {
    const config = await configFile("mirror.yaml", MIRRORED.join("|"));
    const runs = await Promise.all(
      ["cli-worker-a", "cli-worker-b"].map((id) =>
        spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir, "--worker-id", id]),
      ),
    );
    for (const run of runs) assert.equal(run.code, 0, run.stdout + run.stderr);
    const copied = runs.map((r) =>
      Number(/done, ([\d,]+) records/.exec(r.stdout + r.stderr)?.[1]?.replace(/,/g, "")),
    );
    // Every record copied once between them (rebalancing copies nothing twice).
    assert.equal(
      copied.reduce((a, b) => a + b, 0),
      MIRRORED.length * PARTITIONS * PER_PARTITION,
    );

    const verify = await cli(["verify", "--config", config, "--json"]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout) as VerifyReport;
    assert.equal(report.partitions.length, MIRRORED.length * PARTITIONS);
    for (const p of report.partitions) {
      assert.equal(p.mismatch, null);
      assert.equal(p.sourceRecords, PER_PARTITION);
      assert.equal(p.targetRecords, PER_PARTITION);
      assert.equal(p.sourceDigest, p.targetDigest);
    }
    const text = await cli(["verify", "--config", config]);
    assert.match(text.stdout, /verify: OK, 2,400 records in 8 partitions identical/);
  });

  it("status shows the lease table's owners and checkpoints and the source's log ends and lag", async () => {
    const config = await configFile("mirror.yaml", MIRRORED.join("|"));
    // New records after the run: lag on one partition only.
    const behind: TopicPartition = { topic: "PUSH-BI-TOPIC", partition: 2 };
    await sourceWriter.write(behind, records(37, 9));

    const client = await createEmbeddedLeaseClient({ stateDir });
    const admin = new KafkaClusterAdmin({ brokers: source.bootstrapServers });
    try {
      const leases = await new DynamoDbLeaseStore({ client, tableName: "kafka-mirror-leases" }).list();
      const statusFrom = Date.now();
      const status = await cli(["status", "--config", config, "--state-dir", stateDir, "--json"]);
      const statusTo = Date.now();
      assert.equal(status.code, 0, status.stderr);
      const rows = (JSON.parse(status.stdout) as { partitions: StatusRow[] }).partitions;
      const expected = [];
      for (const topic of MIRRORED) {
        for (const o of await admin.listOffsets(topic, [...Array(PARTITIONS).keys()])) {
          const lease = leases.find((l) => l.topic === topic && l.partition === o.partition);
          assert.ok(lease, `lease for ${topic}/${o.partition}`);
          expected.push({
            topic,
            partition: o.partition,
            checkpoint: lease.checkpoint,
            logEnd: o.logEndOffset,
            lag: o.logEndOffset - (lease.checkpoint ?? 0),
            lastProgressAt: lease.lastProgressAt,
            // The holder of an unexpired lease. The runs have ended, but a lease handed over to a
            // run that had just finished stays with it until it expires.
            owner:
              lease.owner === null || lease.expiresAt <= statusFrom
                ? null
                : lease.expiresAt > statusTo
                  ? lease.owner
                  : (rows.find((r) => r.topic === topic && r.partition === o.partition)?.owner ?? null),
          });
        }
      }
      assert.deepEqual(
        rows.map((r) => ({
          topic: r.topic,
          partition: r.partition,
          checkpoint: r.checkpoint,
          logEnd: r.logEnd,
          lag: r.lag,
          lastProgressAt: r.lastProgressAt,
          owner: r.owner,
        })),
        expected,
      );
      assert.deepEqual(
        rows.filter((r) => r.lag > 0).map((r) => [r.topic, r.partition, r.lag]),
        [[behind.topic, behind.partition, 37]],
      );
    } finally {
      client.destroy();
      await admin.close();
    }
    const table = await cli(["status", "--config", config, "--state-dir", stateDir]);
    assert.match(table.stdout, /^Topic\s+Pid\s+Owner\s+Expires\s+Checkpoint\s+LogEnd\s+Lag\s+LastProgress$/m);
    assert.match(
      table.stdout,
      /^PUSH-BI-TOPIC\s+2\s+\S+\s+(-|in \d+ s|\d+ s ago \(expired\))\s+300\s+337\s+37\s/m,
    );
  });

  it("plan lists the selected topics, the ones to create and those with too few target partitions (to grow)", async () => {
    await source.createTopic("NARROW-TOPIC", 4);
    await target.createTopic("NARROW-TOPIC", 2);
    await source.createTopic("NEW-TOPIC", 3);
    const config = await configFile("plan.yaml", "BIN-BI-TOPIC|NARROW-TOPIC|NEW-TOPIC");
    const plan = await cli(["plan", "--config", config, "--json"]);
    assert.equal(plan.code, 0, "drift that a run fixes is not an error");
    const { selected, skipped } = JSON.parse(plan.stdout) as {
      selected: {
        source: string;
        target: string;
        partitions: number;
        targetPartitions: number | null;
        action: string;
      }[];
      skipped: { topic: string; reason: string }[];
    };
    assert.deepEqual(
      selected.map(({ source, target, partitions, targetPartitions, action }) => ({
        source,
        target,
        partitions,
        targetPartitions,
        action,
      })),
      [
        { source: "BIN-BI-TOPIC", target: "BIN-BI-TOPIC", partitions: 4, targetPartitions: 4, action: "ok" },
        {
          source: "NARROW-TOPIC",
          target: "NARROW-TOPIC",
          partitions: 4,
          targetPartitions: 2,
          action: "grow",
        },
        { source: "NEW-TOPIC", target: "NEW-TOPIC", partitions: 3, targetPartitions: null, action: "create" },
      ],
    );
    assert.ok(skipped.some((s) => s.topic === "SCRIPT-BI-TOPIC" && s.reason === "not-whitelisted"));
    const text = await cli(["plan", "--config", config]);
    assert.match(text.stdout, /^NARROW-TOPIC\s+NARROW-TOPIC\s+4\s+2\s+grow\s+0$/m);
    assert.match(text.stdout, /SCRIPT-BI-TOPIC: does not match the whitelist/);
  });

  it("target.copy batches: run --once copies source batches, verify compares them batch by batch and finds another writer's batch", async () => {
    // Prepare: a topic of several source batches per partition (one per write of 50 records).
    const topic = "BATCHES-TOPIC";
    await source.createTopic(topic, 2);
    for (let p = 0; p < 2; p++) {
      for (let i = 0; i < 4; i++) {
        const batch = records(50, 10 * p + i).map((r, j) => ({ ...r, offset: 50 * i + j }));
        await sourceWriter.write({ topic, partition: p }, batch);
      }
    }
    const config = await configFile("batches.yaml", topic, "batches");

    // Act
    const run = await spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir]);
    const verify = await cli(["verify", "--config", config, "--json"]);

    // Assess
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout) as VerifyReport;
    assert.equal(report.partitions.length, 2);
    for (const p of report.partitions) {
      assert.equal(p.mismatch, null);
      assert.equal(p.sourceRecords, 200);
      assert.equal(p.targetRecords, 200);
      assert.equal(p.sourceDigest, p.targetDigest);
    }

    // Act: another writer's batch after the copies of partition 1.
    await targetWriter.write({ topic, partition: 1 }, records(3, 99));
    const after = await cli(["verify", "--config", config, "--json"]);

    // Assess
    assert.equal(after.code, 1, after.stdout + after.stderr);
    const failed = JSON.parse(after.stdout) as VerifyReport;
    const second = failed.partitions.find((p) => p.target.partition === 1);
    assert.equal(second?.mismatch?.kind, "extra", JSON.stringify(second));
  });

  it("target.copy batches with target.compression: run --once recompresses, verify compares records uncompressed", async () => {
    // Prepare: uncompressed batches (the writer's default) into a source topic whose
    // compression.type gzip (real Kafka stores them gzip), copied in lz4.
    const topic = "RECOMPRESSED-TOPIC";
    await source.createTopic(topic, 1, undefined, { "compression.type": "gzip" });
    for (let i = 0; i < 3; i++) {
      const batch = records(40, 30 + i).map((r, j) => ({ ...r, offset: 40 * i + j }));
      await sourceWriter.write({ topic, partition: 0 }, batch);
    }
    const config = await configFile("recompressed.yaml", topic, "batches", "lz4");
    const asTheyCame = await configFile("as-they-came.yaml", topic, "batches");

    // Act
    const run = await spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir]);
    const verify = await cli(["verify", "--config", config, "--json"]);
    const byBytes = await cli(["verify", "--config", asTheyCame, "--json"]);

    // Assess
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const [copied] = (JSON.parse(verify.stdout) as VerifyReport).partitions;
    assert.deepEqual([copied?.mismatch, copied?.sourceRecords, copied?.targetRecords], [null, 120, 120]);
    // The copies are lz4, their sources not: compared as they lie, they differ.
    assert.equal(byBytes.code, 1, byBytes.stdout + byBytes.stderr);
    const [raw] = (JSON.parse(byBytes.stdout) as VerifyReport).partitions;
    assert.equal(raw?.mismatch?.kind, "altered", JSON.stringify(raw));
    // Created with compression.type lz4, not the source's gzip, so the broker kept our lz4 (real
    // Kafka would have rebuilt each copy in gzip). plan shows the codec a change would set.
    const admin = new KafkaClusterAdmin({ brokers: target.bootstrapServers });
    try {
      const configs = (await admin.describeTopicConfigs([topic])).get(topic);
      assert.equal(configs?.get("compression.type"), "lz4");
    } finally {
      await admin.close();
    }
    const stored = dataOf(await rawBatches(target.bootstrapServers, topic));
    assert.ok(stored.length > 0);
    for (const { bytes } of stored) assert.equal(codecIdOf(bytes), 3, "an lz4 copy");
    const toZstd = await cli(["plan", "--config", await configFile("zstd.yaml", topic, "batches", "zstd")]);
    assert.match(toZstd.stdout, /set compression\.type lz4 -> zstd/, toZstd.stdout);
  });

  /** A source topic of 20 records and a target copy edited by `edit`. */
  const mismatched = async (topic: string, edit: (r: MirrorRecord[]) => MirrorRecord[]) => {
    const tp = { topic, partition: 0 };
    await source.createTopic(topic, 1);
    await target.createTopic(topic, 1);
    const original = records(20, 42);
    await sourceWriter.write(tp, original);
    await targetWriter.write(tp, edit(original));
    const config = await configFile(`${topic}.yaml`, topic);
    const result = await cli(["verify", "--config", config, "--json"]);
    const report = JSON.parse(result.stdout) as VerifyReport;
    const text = await cli(["verify", "--config", config]);
    return {
      code: result.code,
      mismatch: report.partitions[0]?.mismatch,
      text: text.stdout,
      textCode: text.code,
    };
  };

  it("verify detects a record altered in the target", async () => {
    const r = await mismatched("ALTERED-TOPIC", (rs) =>
      rs.map((rec, i) => (i === 11 ? { ...rec, value: Buffer.from([0xde, 0xad]) } : rec)),
    );
    assert.equal(r.code, 1);
    assert.equal(r.textCode, 1);
    assert.deepEqual(
      { kind: r.mismatch?.kind, source: r.mismatch?.sourceOffset, target: r.mismatch?.targetOffset },
      { kind: "altered", source: 11, target: 11 },
    );
    assert.match(r.text, /first mismatch: ALTERED-TOPIC\/0: source offset 11 differs from target offset 11/);
    assert.match(r.text, /verify: FAILED/);
  });

  it("verify detects a record missing from the target", async () => {
    const r = await mismatched("MISSING-TOPIC", (rs) => rs.filter((_, i) => i !== 7));
    assert.equal(r.code, 1);
    assert.deepEqual([r.mismatch?.kind, r.mismatch?.sourceOffset], ["missing", 7]);
    assert.match(r.text, /source offset 7 is missing from the target/);
  });

  it("verify detects a record duplicated in the target", async () => {
    const r = await mismatched("DUPLICATED-TOPIC", (rs) => [...rs.slice(0, 15), ...rs.slice(14)]);
    assert.equal(r.code, 1);
    assert.deepEqual(
      [r.mismatch?.kind, r.mismatch?.sourceOffset, r.mismatch?.targetOffset],
      ["duplicated", 14, 15],
    );
    assert.match(r.text, /source offset 14 is duplicated in the target at offset 15/);
  });
});
