/**
 * `kafka-mirror run` syncs consumer groups per groups.whitelist, as the lag function does on
 * Lambda (issue 25: the setting did nothing in `run`): at the end of `run --once` a group's
 * source offsets are translated and committed on the target; a group with a live member on the
 * target gets no commit. Groups are librdkafka's (group-client's admin commit, group-member), the
 * coordinator the mock's; the sync is ours.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";
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

  const committed = async (groupId: string) =>
    (await runGroupClient("offsets", target.bootstrapServers, [groupId]))
      .filter((l) => l.kind === "OFFSET" && l.topic === "orders" && Number(l.offset) >= 0)
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
});
