/** Exit codes of what a command throws: a refused login is exit 3 wherever it surfaces. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeFailure, ExitCode } from "../../../lib/cli/cli-error.js";
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
