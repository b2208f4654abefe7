/**
 * A whitelist that selects nothing is reported, never a success: `run --once` and `verify` exit
 * non-zero naming the near misses (they printed "done, 0 records" and "OK, 0 records ...
 * identical" with exit 0), a continuous run keeps warning, and a config without a whitelist is
 * refused before anything connects.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

describe("kafka-mirror with a whitelist that selects nothing", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let config: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-empty-"));
    config = join(dir, "mirror.yaml");
    const yaml = cliConfigYaml({
      source: source.bootstrapServers,
      target: target.bootstrapServers,
      whitelist: "ORDERS|nomatch.*",
    });
    await writeFile(config, yaml);
    await source.createTopic("orders", 1);
  });

  after(async () => {
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("run --once exits 1 saying why, with the near miss", async () => {
    const run = await spawnCli(["run", "--once", "--config", config, "--state-dir", join(dir, "state")], {
      cwd: dir,
      killAfterMs: 120_000,
    });

    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      run.stderr,
      /nothing to copy: topics\.whitelist "ORDERS\|nomatch\.\*" selects none of the 1 topic/,
    );
    assert.match(run.stderr, /"orders" \(differs in letter case\)/);
    assert.match(run.stderr, /the whitelist selects no topic; nothing is copied/, "the worker's warning too");
  });

  it("verify exits 1: nothing compared proves nothing", async () => {
    const verify = await spawnCli(["verify", "--config", config], { cwd: dir, killAfterMs: 60_000 });

    assert.equal(verify.code, 1, verify.stdout + verify.stderr);
    assert.match(verify.stdout, /NOTHING COMPARED: topics\.whitelist "ORDERS\|nomatch\.\*" selects none/);
    assert.match(verify.stdout, /verify: FAILED, no topic selected, nothing compared/);
  });

  it("a config without a whitelist is refused, naming the field and what to write", async () => {
    const bare = join(dir, "bare.yaml");
    await writeFile(
      bare,
      `source:\n  brokers: ${source.bootstrapServers.join(",")}\ntarget:\n  brokers: x:1\n`,
    );

    const plan = await spawnCli(["plan", "--config", bare], { cwd: dir, killAfterMs: 30_000 });

    assert.equal(plan.code, 2, plan.stdout + plan.stderr);
    assert.match(
      plan.stderr,
      /topics\.whitelist: required: a whole-name regular expression of the topics to mirror \("\.\*" for all\)/,
    );
  });
});
