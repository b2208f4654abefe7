/**
 * Per-command options, as the real `kafka-mirror` process takes them: an option of another
 * command is refused by name before anything is read or connected, `<command> --help` prints that
 * command's own usage, and `--version` the package's version.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { spawnCli } from "../../helpers/cli.js";

describe("kafka-mirror options per command", () => {
  it("refuses run --once --dry-run (a failover option), naming run's options, and copies nothing", async () => {
    // The config does not exist: a refusal that came after reading it would name the file instead.
    const result = await spawnCli(["run", "--once", "--dry-run", "--config", "no-such-mirror.yaml"]);

    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /^kafka-mirror: run does not take --dry-run; it takes --config, /);
    assert.match(result.stderr, /--once, --worker-id/);
    assert.doesNotMatch(result.stderr, /no-such-mirror\.yaml: not found/);
  });

  it("refuses plan --dry-run and status --once the same way", async () => {
    for (const [command, option] of [
      ["plan", "--dry-run"],
      ["status", "--once"],
    ] as const) {
      const result = await spawnCli([command, option, "--config", "no-such-mirror.yaml"]);

      assert.equal(result.code, 2, `${command}: ${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^kafka-mirror: ${command} does not take ${option}; it takes`));
    }
  });

  it("prints plan's own usage, options, defaults and an example with plan --help", async () => {
    const result = await spawnCli(["plan", "--help"]);

    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^usage: kafka-mirror plan --config FILE/);
    assert.match(
      result.stdout,
      /\n {2}--state-dir DIR +embedded lease store directory \(default \.kafka-mirror\/ next to the config file\)/,
    );
    assert.match(result.stdout, /\nexample:\n {2}kafka-mirror plan --config /);
    assert.doesNotMatch(result.stdout, /--dry-run|--once/, "only plan's options");
  });

  it("prints the package version with --version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };

    const result = await spawnCli(["--version"]);

    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${pkg.version}\n`);
  });
});
