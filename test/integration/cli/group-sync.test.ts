/**
 * `kafka-mirror run` syncs consumer groups per groups.whitelist, as the lag function does on
 * Lambda (issue 25: the setting did nothing in `run`): at the end of `run --once` a group's
 * source offsets are translated and committed on the target; a group with a live member on the
 * target gets no commit. Groups are librdkafka's (group-client's admin commit, group-member), the
 * coordinator the mock's; the sync is ours.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CLI_BIN, spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { alterGroupOffsets, runGroupClient } from "../../helpers/group-client.js";
import { type GroupMember, startGroupMember } from "../../helpers/group-member.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

describe("kafka-mirror run syncs consumer groups", () => {
  let source: MockKafka;
  let target: MockKafka;
  let member: GroupMember | undefined;
  let dir: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-groups-"));
    await Promise.all([source.createTopic("orders", 2), target.createTopic("elsewhere", 1)]);
    for (const partition of [0, 1]) {
      const records = Array.from({ length: 10 }, (_, i) => ({
        key: null,
        value: Buffer.from(`r-${partition}-${i}`),
      }));
      await kcatProduce({ brokers: source.bootstrapServers, topic: "orders", partition, records });
    }
  });

  after(async () => {
    await member?.stop();
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const committed = async (groupId: string, topic = "orders") =>
    (await runGroupClient("offsets", target.bootstrapServers, [groupId]))
      .filter((l) => l.kind === "OFFSET" && l.topic === topic && Number(l.offset) >= 0)
      .map((l) => `${l.partition}:${l.offset}`)
      .sort();

  it("run --once commits the translated offsets on the target, never into a group with members", async () => {
    await alterGroupOffsets(source.bootstrapServers, "billing", ["orders:0:4", "orders:1:7"]);
    await alterGroupOffsets(source.bootstrapServers, "busy", ["orders:0:3"]);
    member = startGroupMember({
      brokers: target.bootstrapServers,
      groupId: "busy",
      protocol: "classic",
      topics: ["elsewhere"],
    });
    await member.assigned(30_000);
    const config = join(dir, "mirror.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: "orders",
    });
    await writeFile(config, `${yaml}groups:\n  whitelist: billing|busy|idle\n`);

    const run = await spawnCli(["run", "--once", "--config", config, "--lease-store", "memory"], {
      cwd: dir,
      killAfterMs: 120_000,
    });

    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /group offsets: 1 group\(s\) synced, 1 skipped \(members on the target\), 0 failed/,
    );
    // The target was empty, so each copy sits at its source offset: the translation is the same number.
    assert.deepEqual(await committed("billing"), ["0:4", "1:7"]);
    assert.deepEqual(await committed("busy"), [], "a group with a live member on the target gets no commit");
  });

  it("a continuous run syncs within its first minute, from the lease leader's process", {
    timeout: 180_000,
  }, async () => {
    await source.createTopic("payments", 1);
    const records = Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`p-${i}`) }));
    await kcatProduce({ brokers: source.bootstrapServers, topic: "payments", partition: 0, records });
    await alterGroupOffsets(source.bootstrapServers, "steady", ["payments:0:6"]);
    const config = join(dir, "continuous.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: "payments",
    });
    await writeFile(config, `${yaml}groups:\n  whitelist: steady\n`);

    const run = spawn(process.execPath, [CLI_BIN, "run", "--config", config, "--lease-store", "memory"], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    run.stdout.on("data", (c: Buffer) => {
      output += c.toString("utf8");
    });
    run.stderr.on("data", (c: Buffer) => {
      output += c.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => run.once("exit", resolve));
    try {
      const giveUpAt = Date.now() + 120_000;
      while (!/group offsets: 1 group\(s\) synced/.test(output) && Date.now() < giveUpAt) {
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.match(
        output,
        /group offsets: 1 group\(s\) synced, 0 skipped \(members on the target\), 0 failed/,
      );
      assert.deepEqual(await committed("steady", "payments"), ["0:6"]);
    } finally {
      run.kill("SIGINT");
    }
    assert.equal(await exited, 130, output);
  });
});
