/**
 * A restart explains itself. Regression: after kill -9 a restarted `run` waited ~50 s printing
 * "0 records copied", and `status` named the dead worker as owner with no expiry. Now `status`
 * shows when each lease expires; a run restarted on the same state directory takes its dead
 * run's leases back at once (its slot in the directory says they were its own); and one that
 * finds another worker's leases says what it waits for.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { StatusRow } from "../../../lib/cli/status-rows.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { CLI_BIN, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

const PARTITIONS = 3;
const RECORDS = 40;
/** Long enough that waiting for it shows: the restart must be done well within it. */
const LEASE_MS = 30_000;

describe("kafka-mirror run restarted after kill -9", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let config: string;
  const stateDirs: string[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    const topic = `RESTART-${randomUUID()}`;
    await source.createTopic(topic, PARTITIONS);
    const writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    try {
      for (let p = 0; p < PARTITIONS; p++)
        await writer.write(
          { topic, partition: p },
          makeRecords(RECORDS, p).map((r, i) => ({ ...r, offset: i })),
        );
    } finally {
      await writer.close();
    }
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-restart-"));
    config = join(dir, "mirror.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: topic,
    });
    await writeFile(config, yaml.replace("durationMs: 10000", `durationMs: ${LEASE_MS}`));
  });

  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    await Promise.allSettled(stateDirs.map((d) => stopLeaseServer(d)));
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const statusRows = async (stateDir: string): Promise<StatusRow[]> => {
    const status = await spawnCli(["status", "--config", config, "--state-dir", stateDir, "--json"]);
    return status.code === 0 ? (JSON.parse(status.stdout) as { partitions: StatusRow[] }).partitions : [];
  };

  /** A continuous run, killed with SIGKILL once it holds every partition's lease. */
  const killedHolding = async (stateDir: string, extra: readonly string[] = []): Promise<void> => {
    stateDirs.push(stateDir);
    const child = spawn(
      process.execPath,
      [CLI_BIN, "run", "--config", config, "--state-dir", stateDir, ...extra],
      {
        stdio: "ignore",
      },
    );
    children.push(child);
    const giveUpAt = Date.now() + 60_000;
    for (;;) {
      const rows = await statusRows(stateDir);
      if (rows.length === PARTITIONS && rows.every((r) => r.owner !== null)) break;
      assert.ok(Date.now() < giveUpAt, `the run never held every lease: ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };

  it("status shows the dead run's leases with their expiry; the restart takes them back at once", async () => {
    const stateDir = join(dir, "own");
    await killedHolding(stateDir);

    const status = await spawnCli(["status", "--config", config, "--state-dir", stateDir]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^Topic\s+Pid\s+Owner\s+Expires\s/m);
    const rows = status.stdout.split("\n").filter((l) => l.startsWith("RESTART-"));
    assert.equal(rows.length, PARTITIONS, status.stdout);
    for (const row of rows) assert.match(row, /\s\S+-w0~[0-9a-f]{8}\.1\s+in \d+ s\s/, row);

    const restart = await spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir], {
      killAfterMs: 120_000,
    });

    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    assert.ok(restart.elapsedMs < LEASE_MS / 2, `took ${restart.elapsedMs} ms: waited for its own leases`);
    assert.doesNotMatch(restart.stderr, /waiting for/);
    assert.match(restart.stdout, /-w0~[0-9a-f]{8}: mirroring with leases in embedded store/);
    assert.deepEqual(
      (await statusRows(stateDir)).map((r) => r.checkpoint),
      Array(PARTITIONS).fill(RECORDS),
    );
  });

  it("a run that finds another worker's leases says whose, how many and for how long it waits", async () => {
    const stateDir = join(dir, "other");
    await killedHolding(stateDir, ["--worker-id", "w-3"]);

    const restart = await spawnCli(["run", "--once", "--config", config, "--state-dir", stateDir], {
      killAfterMs: 120_000,
    });

    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    assert.match(
      restart.stderr,
      new RegExp(`\\[warn\\] waiting for ${PARTITIONS} leases held by w-3\\.1 to expire \\(up to \\d+ s\\)`),
    );
    assert.equal(restart.stderr.match(/waiting for/g)?.length, 1, `once: ${restart.stderr}`);
  });
});
