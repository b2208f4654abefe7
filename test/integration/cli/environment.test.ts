/**
 * Environment variables in the CLI, as the README documents them: each field's KAFKA_MIRROR_*
 * variable wins over the config file (`KAFKA_MIRROR_TOPICS_WHITELIST=logs kafka-mirror plan`
 * changed nothing), and a KAFKA_MIRROR_* variable that names no field is refused by name.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

describe("kafka-mirror reads KAFKA_MIRROR_* variables over its config file", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let config: string;
  const env = (vars: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, ...vars });

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-env-"));
    config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: target.bootstrapServers,
        whitelist: "orders",
      }),
    );
    await Promise.all([source.createTopic("orders", 1), source.createTopic("logs", 2)]);
  });

  after(async () => {
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("plan selects what KAFKA_MIRROR_TOPICS_WHITELIST says, not the file's whitelist", async () => {
    const fromFile = await spawnCli(["plan", "--config", config, "--json"], {
      cwd: dir,
      env: env({}),
      killAfterMs: 60_000,
    });
    const fromEnv = await spawnCli(["plan", "--config", config, "--json"], {
      cwd: dir,
      env: env({ KAFKA_MIRROR_TOPICS_WHITELIST: "logs" }),
      killAfterMs: 60_000,
    });

    assert.equal(fromFile.code, 0, fromFile.stdout + fromFile.stderr);
    assert.equal(fromEnv.code, 0, fromEnv.stdout + fromEnv.stderr);
    const sources = (out: string) =>
      (JSON.parse(out) as { selected: { source: string }[] }).selected.map((t) => t.source);
    assert.deepEqual(sources(fromFile.stdout), ["orders"]);
    assert.deepEqual(sources(fromEnv.stdout), ["logs"]);
  });

  it("refuses a misspelt KAFKA_MIRROR_ variable by name before connecting (exit 2)", async () => {
    const plan = await spawnCli(["plan", "--config", config], {
      cwd: dir,
      env: env({ KAFKA_MIRROR_TOPICS_WHITELST: "logs" }),
      killAfterMs: 30_000,
    });

    assert.equal(plan.code, 2, plan.stdout + plan.stderr);
    assert.match(plan.stderr, /KAFKA_MIRROR_TOPICS_WHITELST: unknown variable: names no config field/);
    assert.equal(plan.stdout, "");
  });
});
