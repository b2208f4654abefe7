import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CliError, describeFailure, ExitCode } from "../../../lib/cli/cli-error.js";
import { loadConfigFile } from "../../../lib/cli/config-file.js";
import { ReplicatorError } from "../../../lib/errors.js";

describe("loadConfigFile", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-config-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const file = async (name: string, text: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, text);
    return path;
  };
  const rejectsWith = async (path: string, message: RegExp): Promise<void> => {
    await assert.rejects(
      () => loadConfigFile(path),
      (error: unknown) =>
        error instanceof CliError && error.exitCode === ExitCode.BAD_INPUT && message.test(error.message),
    );
  };

  it("reads the minimum config from YAML and from JSON, with defaults applied", async () => {
    const yaml = await file(
      "min.yaml",
      "source:\n  brokers: a:9092,b:9092\ntarget:\n  brokers: [c:9092]\ntopics:\n  whitelist: BIN-BI-TOPIC|PUSH-BI-TOPIC\n",
    );
    const json = await file(
      "min.json",
      JSON.stringify({
        source: { brokers: "a:9092,b:9092" },
        target: { brokers: ["c:9092"] },
        topics: { whitelist: "X" },
      }),
    );
    const fromYaml = await loadConfigFile(yaml);
    assert.deepEqual(fromYaml.source.brokers, ["a:9092", "b:9092"]);
    assert.equal(fromYaml.topics.whitelist, "BIN-BI-TOPIC|PUSH-BI-TOPIC");
    assert.equal(fromYaml.leases.table, "kafka-mirror-leases");
    assert.deepEqual((await loadConfigFile(json)).target.brokers, ["c:9092"]);
  });

  it("names a missing file", async () => {
    await rejectsWith(join(dir, "absent.yml"), /^cannot read config file .*absent\.yml: not found$/);
  });

  it("names a path that is not a readable file", async () => {
    await rejectsWith(dir, /^cannot read config file .*: is a directory, not a file$/);
    const notDir = await file("plain.txt", "x");
    await rejectsWith(join(notDir, "config.yaml"), /^cannot read config file .*plain\.txt\/config\.yaml: /);
  });

  it("names invalid YAML with line and column, and a key given twice", async () => {
    await rejectsWith(
      await file("bad.yaml", "source:\n  brokers: [a:1\n"),
      /^invalid YAML in .*bad\.yaml at line \d+, column \d+: \S/,
    );
    await rejectsWith(
      await file("twice.yaml", "source:\n  brokers: a:1\nsource:\n  brokers: b:1\n"),
      /^invalid YAML in .*twice\.yaml at line 3, column 1: Map keys must be unique/,
    );
  });

  it("names invalid JSON", async () => {
    await rejectsWith(await file("bad.json", "{ source: 1 }"), /^invalid JSON in .*bad\.json: /);
  });

  it("refuses a document that is not a mapping", async () => {
    await rejectsWith(await file("list.yaml", "- a\n- b\n"), /must hold a mapping of settings, got a list/);
    await rejectsWith(await file("empty.yaml", ""), /must hold a mapping of settings, got nothing/);
  });

  it("lists every unknown key and every bad field, one per line", async () => {
    const path = await file(
      "many.yaml",
      "source:\n  brokers: a:1\n  brokerz: b\ntarget:\n  brokers: c:1\ntopics:\n  whitelist: '(unclosed'\nleasez: {}\n",
    );
    await assert.rejects(
      () => loadConfigFile(path),
      (error: unknown) => {
        assert.ok(error instanceof CliError);
        const lines = error.message.split("\n");
        assert.match(lines[0] ?? "", /^invalid config in .*many\.yaml:$/);
        assert.ok(
          lines.some((l) => /^ {2}source\.brokerz: unknown key/.test(l)),
          error.message,
        );
        assert.ok(
          lines.some((l) => /^ {2}leasez: unknown key/.test(l)),
          error.message,
        );
        assert.ok(
          lines.some((l) => /^ {2}topics\.whitelist: invalid regular expression "\(unclosed"/.test(l)),
          error.message,
        );
        return true;
      },
    );
  });
});

describe("describeFailure", () => {
  it("gives the message alone without --debug and adds the stack and causes with it", () => {
    const error = new CliError("cannot reach the source cluster", ExitCode.UNREACHABLE, {
      cause: new Error("ECONNREFUSED"),
    });
    assert.deepEqual(describeFailure(error, false), {
      exitCode: 3,
      message: "cannot reach the source cluster",
    });
    const debug = describeFailure(error, true).message;
    assert.match(debug, /\n\s+at /);
    assert.match(debug, /caused by: Error: ECONNREFUSED/);
  });

  it("maps ReplicatorError codes to exit codes and names the code", () => {
    const invalid = describeFailure(new ReplicatorError("CONFIG_INVALID", "invalid config: x"), false);
    assert.deepEqual(invalid, {
      exitCode: ExitCode.BAD_INPUT,
      message: "invalid config: x [CONFIG_INVALID]",
    });
    assert.equal(
      describeFailure(new ReplicatorError("LEASE_STORE_UNAVAILABLE", "down"), false).exitCode,
      ExitCode.UNREACHABLE,
    );
    assert.equal(describeFailure(new ReplicatorError("KAFKA_FATAL", "no"), false).exitCode, ExitCode.FAILED);
  });

  it("points an unexpected error at --debug instead of printing its stack", () => {
    const { exitCode, message } = describeFailure(new TypeError("x is undefined"), false);
    assert.equal(exitCode, ExitCode.FAILED);
    assert.equal(message, "unexpected error: TypeError: x is undefined (run with --debug for details)");
  });
});

describe("loadConfigFile with KAFKA_MIRROR_* variables", () => {
  let dir: string;
  let path: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-config-env-"));
    path = join(dir, "mirror.yaml");
    await writeFile(
      path,
      "source:\n  brokers: a:9092\ntarget:\n  brokers: c:9092\ntopics:\n  whitelist: orders\n",
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("lets a field's variable win over the file, and an empty one leave the file's value", async () => {
    const config = await loadConfigFile(path, {
      KAFKA_MIRROR_TOPICS_WHITELIST: "logs",
      KAFKA_MIRROR_BATCH_MAX_WAIT_MS: "250",
      KAFKA_MIRROR_TARGET_BROKERS: "",
    });

    assert.equal(config.topics.whitelist, "logs");
    assert.equal(config.batch.maxWaitMs, 250);
    assert.deepEqual(config.target.brokers, ["c:9092"]);
  });

  it("refuses a KAFKA_MIRROR_ variable that names no field, by name, and accepts the credential ones", async () => {
    await assert.rejects(
      () => loadConfigFile(path, { KAFKA_MIRROR_TOPICS_WHITELST: "logs", KAFKA_MIRROR_SOURCE_USERNAME: "u" }),
      (error: unknown) =>
        error instanceof CliError &&
        /KAFKA_MIRROR_TOPICS_WHITELST: unknown variable: names no config field/.test(error.message) &&
        !/USERNAME/.test(error.message),
    );
  });

  it("accepts KAFKA_MIRROR_CRC32C, which the record codec reads itself", async () => {
    const config = await loadConfigFile(path, { KAFKA_MIRROR_CRC32C: "js" });

    assert.equal(config.topics.whitelist, "orders");
  });

  it("refuses KAFKA_MIRROR_CONFIG, pointing at --config", async () => {
    await assert.rejects(
      () => loadConfigFile(path, { KAFKA_MIRROR_CONFIG: "{}" }),
      (error: unknown) =>
        error instanceof CliError && /KAFKA_MIRROR_CONFIG: .*--config FILE/.test(error.message),
    );
  });

  it("names the variables it applied when the result is invalid", async () => {
    await assert.rejects(
      () => loadConfigFile(path, { KAFKA_MIRROR_BATCH_MAX_WAIT_MS: "soon" }),
      (error: unknown) =>
        error instanceof CliError &&
        /with KAFKA_MIRROR_BATCH_MAX_WAIT_MS from the environment:\n {2}batch\.maxWaitMs: expected an integer/.test(
          error.message,
        ),
    );
  });
});
