/** Exit codes of what a command throws: a refused login is exit 3 wherever it surfaces. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CliError, describeFailure, ExitCode, failureJson } from "../../../lib/cli/cli-error.js";
import { ReplicatorError } from "../../../lib/errors.js";

/** The shape kafkajs gives a refused SASL login (its error class is named so). */
function saslRefusal(): Error {
  const error = new Error("SASL SCRAM SHA512 authentication failed: Authentication failed");
  error.name = "KafkaJSSASLAuthenticationError";
  return error;
}

describe("describeFailure", () => {
  it("gives exit 3 and one line for a refused login found after the reachability check", () => {
    const wrapped = new ReplicatorError("KAFKA_FATAL", "fetch failed: KafkaJSSASLAuthenticationError", {
      cause: saslRefusal(),
    });
    const { exitCode, message } = describeFailure(wrapped, false);
    assert.equal(exitCode, ExitCode.UNREACHABLE);
    assert.equal(exitCode, 3);
    assert.equal(message.split("\n").length, 1);
    assert.match(message, /^authentication failed: fetch failed/);
  });

  it("gives exit 2 for a state directory that cannot be used: the operator fixes --state-dir", () => {
    const error = new ReplicatorError("STATE_DIR_UNUSABLE", "state directory /proc/nope cannot be used: ...");
    const { exitCode, message } = describeFailure(error, false);
    assert.equal(exitCode, ExitCode.BAD_INPUT);
    assert.equal(message, "state directory /proc/nope cannot be used: ... [STATE_DIR_UNUSABLE]");
  });

  it("keeps other Kafka failures at exit 1", () => {
    const { exitCode } = describeFailure(new ReplicatorError("KAFKA_FATAL", "fetch failed: CORRUPT"), false);
    assert.equal(exitCode, ExitCode.FAILED);
  });
});

describe("failureJson", () => {
  it("gives one JSON object with the message, exit code, code and details, and no usage text", () => {
    const error = new ReplicatorError("METRICS_PORT_UNUSABLE", "metrics port 9400 on 127.0.0.1 is in use", {
      details: { host: "127.0.0.1", port: 9400 },
    });
    assert.deepEqual(JSON.parse(failureJson(error, false).json), {
      error: "metrics port 9400 on 127.0.0.1 is in use",
      exitCode: ExitCode.BAD_INPUT,
      code: "METRICS_PORT_UNUSABLE",
      details: { host: "127.0.0.1", port: 9400 },
    });
    const usage = new CliError("run does not take --dry-run", ExitCode.BAD_INPUT, { usage: "usage: ..." });
    const { json } = failureJson(usage, false);
    assert.equal(json.includes("\n"), false);
    assert.deepEqual(JSON.parse(json), { error: "run does not take --dry-run", exitCode: 2 });
  });
});
