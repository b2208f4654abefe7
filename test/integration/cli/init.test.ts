/**
 * `kafka-mirror init` as a user runs it: the file it writes is refused as is, naming the three
 * required fields, and once they are filled in `plan` runs with it against two clusters.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

describe("kafka-mirror init", () => {
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  const env = { PATH: process.env.PATH };

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-cli-init-"));
    await source.createTopic("orders", 2);
  });

  after(async () => {
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("writes a config that is refused naming the required fields, and loads once they are filled", async () => {
    const file = join(dir, "mirror.yaml");

    const init = await spawnCli(["init", "--output", file], { cwd: dir, env, killAfterMs: 30_000 });
    assert.equal(init.code, 0, init.stdout + init.stderr);
    assert.match(init.stdout, /wrote .*mirror\.yaml: uncomment and fill in source\.brokers/);

    const asWritten = await spawnCli(["plan", "--config", file], { cwd: dir, env, killAfterMs: 30_000 });
    assert.equal(asWritten.code, 2, asWritten.stdout + asWritten.stderr);
    assert.match(asWritten.stderr, /source\.brokers: expected at least one "host:port" broker, got nothing/);
    assert.match(asWritten.stderr, /target\.brokers: /);
    assert.match(asWritten.stderr, /topics\.whitelist: required/);

    const yaml = (await readFile(file, "utf8"))
      .replace(/^ {2}# brokers: source-kafka.*$/m, `  brokers: ${source.bootstrapServers.join(",")}`)
      .replace(/^ {2}# brokers: target-kafka.*$/m, `  brokers: ${target.bootstrapServers.join(",")}`)
      .replace(/^ {2}# whitelist: .*$/m, "  whitelist: orders");
    await writeFile(file, yaml);
    const plan = await spawnCli(["plan", "--config", file, "--json"], { cwd: dir, env, killAfterMs: 60_000 });
    assert.equal(plan.code, 0, plan.stdout + plan.stderr);
    assert.deepEqual(
      (JSON.parse(plan.stdout) as { selected: { source: string; action: string }[] }).selected.map((t) => [
        t.source,
        t.action,
      ]),
      [["orders", "create"]],
    );
  });

  it("never overwrites a file, and prints to stdout without --output", async () => {
    const file = join(dir, "existing.yaml");
    await writeFile(file, "mine\n");

    const again = await spawnCli(["init", "--output", file], { cwd: dir, env, killAfterMs: 30_000 });
    const stdout = await spawnCli(["init"], { cwd: dir, env, killAfterMs: 30_000 });

    assert.equal(again.code, 2, again.stdout + again.stderr);
    assert.match(again.stderr, /cannot write .*existing\.yaml: it exists/);
    assert.equal(await readFile(file, "utf8"), "mine\n");
    assert.equal(stdout.code, 0);
    assert.match(stdout.stdout, /^source:$/m);
    assert.match(stdout.stdout, /^ {2}durationMs: 60000$/m);
  });
});
