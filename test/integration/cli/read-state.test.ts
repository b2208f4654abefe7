/**
 * Commands that only read the leases never create a store. Regression: `cd /tmp && kafka-mirror
 * failover --dry-run` created an empty store (and a second background server) and reported the
 * whole log as not copied; `status` showed it as lag; `offsets` exited 0. Now, with nothing where
 * they look, they stop with "no checkpoints in <dir> (lease table <t>)" and exit 2; and the
 * default state directory sits next to the config file, so any working directory finds it.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { createEmbeddedLeaseClient } from "../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const KILL_AFTER_MS = 60_000;
const TABLE = "kafka-mirror-leases";

describe("kafka-mirror's read-only commands where there is no state", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let configDir: string;
  let config: string;
  let elsewhere: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    const topic = `READ-STATE-${randomUUID()}`;
    await source.createTopic(topic, 2);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    try {
      for (const partition of [0, 1])
        await writer.write(
          { topic, partition },
          makeRecords(50, partition).map((r, i) => ({ ...r, offset: i })),
        );
    } finally {
      await writer.close();
    }
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-read-state-"));
    configDir = join(dir, "config");
    elsewhere = join(dir, "elsewhere");
    await Promise.all([mkdir(configDir), mkdir(elsewhere)]);
    config = join(configDir, "mirror.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: topic,
    });
    await writeFile(config, yaml);
  });

  after(async () => {
    await stopLeaseServer(join(configDir, ".kafka-mirror"));
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const noCheckpoints = (stateDir: string): RegExp =>
    new RegExp(
      `^kafka-mirror: no checkpoints in ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} ` +
        `\\(lease table ${TABLE}\\): wrong --state-dir or table\\? \\[LEASE_STATE_MISSING\\]\\n$`,
    );

  for (const command of [
    ["status"],
    ["offsets"],
    ["failover", "--group", "billing", "--dry-run"],
    ["status", "--json"],
  ]) {
    it(`${command.join(" ")} from another directory stops, creating nothing`, async () => {
      const result = await spawnCli([...command, "--config", config], {
        cwd: elsewhere,
        killAfterMs: KILL_AFTER_MS,
      });

      const stateDir = join(configDir, ".kafka-mirror");
      assert.equal(result.code, 2, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
      if (command.includes("--json")) {
        // The message as it is, in the text line or in --json's error object (where main has one).
        const message = `no checkpoints in ${stateDir} (lease table ${TABLE}): wrong --state-dir or table?`;
        assert.ok(
          result.stderr.includes(message) && result.stderr.includes("LEASE_STATE_MISSING"),
          result.stderr,
        );
      } else assert.match(result.stderr, noCheckpoints(stateDir));
      assert.equal(result.stdout, "", "no report of a store that is not there");
      assert.equal(existsSync(stateDir), false, "no state directory next to the config");
      assert.equal(existsSync(join(elsewhere, ".kafka-mirror")), false, "none in the working directory");
    });
  }

  it("status with --state-dir naming an empty directory stops without writing into it", async () => {
    const empty = join(dir, "empty");
    await mkdir(empty);

    const result = await spawnCli(["status", "--config", config, "--state-dir", empty], {
      killAfterMs: KILL_AFTER_MS,
    });

    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, noCheckpoints(empty));
    assert.equal(existsSync(join(empty, "server.json")), false, "no background server started");
    assert.equal(existsSync(join(empty, "secret")), false, "nothing written");
  });

  it("the same config finds the same state from any working directory", async () => {
    const run = await spawnCli(["run", "--once", "--config", config], {
      cwd: elsewhere,
      killAfterMs: 120_000,
    });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const stateDir = join(configDir, ".kafka-mirror");
    assert.ok(run.stdout.includes(`embedded store ${stateDir}, table ${TABLE}`), run.stdout);

    const status = await spawnCli(["status", "--config", config, "--json"], {
      cwd: dir,
      killAfterMs: KILL_AFTER_MS,
    });

    assert.equal(status.code, 0, status.stderr);
    const rows = (JSON.parse(status.stdout) as { partitions: { checkpoint: number | null }[] }).partitions;
    assert.deepEqual(
      rows.map((r) => r.checkpoint),
      [50, 50],
    );
    const text = await spawnCli(["status", "--config", config], {
      cwd: configDir,
      killAfterMs: KILL_AFTER_MS,
    });
    assert.equal(text.code, 0, text.stderr);
    assert.ok(
      text.stdout.endsWith(`\nlease store: embedded store ${stateDir}, table ${TABLE}\n`),
      text.stdout,
    );
  });

  it("a state directory of another lease table is no checkpoints, and the table is not created", async () => {
    const other = join(configDir, "other.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: "X",
    });
    await writeFile(other, `${yaml}  table: other-table\n`);
    const stateDir = join(configDir, ".kafka-mirror");

    const result = await spawnCli(["status", "--config", other], { killAfterMs: KILL_AFTER_MS });

    assert.equal(result.code, 2, result.stderr);
    assert.ok(
      result.stderr.includes(`no checkpoints in ${stateDir} (lease table other-table): wrong --state-dir`),
      result.stderr,
    );
    const client = await createEmbeddedLeaseClient({ stateDir });
    try {
      const { TableNames } = await client.send(new ListTablesCommand({}));
      assert.deepEqual(TableNames, [TABLE]);
    } finally {
      client.destroy();
    }
  });
});
