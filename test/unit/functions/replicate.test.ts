/**
 * Issue 16: a connection opened inside a pump after a secret rotation is refused, the partition
 * ends in AUTHENTICATION_FAILED and the run itself returns normally. The replicate function must
 * still make RefreshOnAuthFailure re-read the secret once and reconnect. The secret source is the
 * in-memory fake of our SecretSource; the worker is scripted (its summaries are the input here).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "aws-lambda";
import { type ReplicationRunner, RUN_SAFETY_MARGIN_MS, replicate } from "../../../functions/replicate.js";
import { parseConfig } from "../../../lib/config/schema.js";
import type { RunError, RunSummary } from "../../../lib/core/run/run-summary.js";
import { isReplicatorError, ReplicatorError } from "../../../lib/errors.js";
import { clusterSecurityOptions } from "../../../lib/secrets/cluster-security.js";
import { RefreshOnAuthFailure } from "../../../lib/secrets/credential-refresh.js";
import { CapturingLogger } from "../../helpers/fake-observability.js";
import { RotatingSecrets } from "../../helpers/rotating-secrets.js";

const SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:source-kafka";
const REFUSED: RunError = {
  topic: "orders",
  partition: 3,
  code: "AUTHENTICATION_FAILED",
  message: "fetch orders/3@42 failed: KafkaJSSASLAuthenticationError: SASL PLAIN authentication failed",
};

function summary(errors: RunError[]): RunSummary {
  const error = errors[0] === undefined ? null : new ReplicatorError(errors[0].code, errors[0].message);
  return {
    workerId: "w1",
    startedAt: 0,
    endedAt: 1,
    endReason: "deadline",
    partitions: [
      {
        source: { topic: "orders", partition: 3 },
        target: { topic: "orders", partition: 3 },
        records: 5,
        bytes: 50,
        terms: 1,
        checkpoint: 42,
        caughtUp: false,
        stopReason: error === null ? "deadline" : "error",
        error,
      },
    ],
    errors,
    caughtUp: false,
    emptySelection: null,
  };
}

/** A Lambda context whose remaining time is scripted, one value per call. */
function contextWith(remaining: number[]): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: "replicate",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:replicate",
    memoryLimitInMB: "512",
    awsRequestId: "req-1",
    logGroupName: "/aws/lambda/replicate",
    logStreamName: "stream",
    getRemainingTimeInMillis: () => {
      const next = remaining.shift();
      assert.ok(next !== undefined, "remaining time asked more often than scripted");
      return next;
    },
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Replicators built like the function builds them: security from the secret, `fresh` on a rebuild. */
function rig(summaries: RunSummary[], current = "new") {
  const secrets = new RotatingSecrets(
    { username: "u", password: "old" },
    { username: "u", password: current },
  );
  const cluster = parseConfig({
    source: { brokers: "s1:9094", saslMechanism: "plain", secretArn: SECRET },
    target: { brokers: "t1:9092" },
    topics: { whitelist: ".*" },
  }).source;
  const built: { password: string; closed: boolean }[] = [];
  const deadlines: number[] = [];
  const refresh = new RefreshOnAuthFailure(async (fresh) => {
    const sasl = (await clusterSecurityOptions(cluster, "source", { secrets, fresh })).sasl;
    const entry = { password: sasl !== undefined && "password" in sasl ? sasl.password : "", closed: false };
    built.push(entry);
    const runner: ReplicationRunner & { close(): Promise<void> } = {
      workerId: "w1",
      workerFor: () => ({
        async replicate(deadline: number) {
          deadlines.push(deadline);
          const next = summaries.shift();
          assert.ok(next !== undefined, "more runs than scripted");
          return next;
        },
      }),
      async close() {
        entry.closed = true;
      },
    };
    return runner;
  }, new CapturingLogger());
  return { refresh, secrets, built, deadlines };
}

describe("replicate (secret rotation, issue 16)", () => {
  it("a partition refused mid-run makes the function re-read the secret once and reconnect", async () => {
    const { refresh, secrets, built, deadlines } = rig([summary([REFUSED]), summary([])]);
    const context = contextWith([600_000, 300_000]);

    const before = Date.now();
    const result = await refresh.use((replicator) => replicate(replicator, context));
    const afterRun = Date.now();

    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
    assert.deepEqual(built, [
      { password: "old", closed: true },
      { password: "new", closed: false },
    ]);
    assert.equal(result.errors, 0);
    // The repeat gets a deadline from the time left then, not the first run's.
    assert.equal(deadlines.length, 2);
    const [first, second] = deadlines as [number, number];
    assert.ok(first >= before + 600_000 - RUN_SAFETY_MARGIN_MS && first <= afterRun + 600_000);
    assert.ok(second >= before + 300_000 - RUN_SAFETY_MARGIN_MS && second <= afterRun + 300_000);
  });

  it("does not re-read for a run without a refused login (other partition errors included)", async () => {
    const fatal: RunError = {
      ...REFUSED,
      code: "KAFKA_FATAL",
      message: "fetch failed: TOPIC_AUTHORIZATION_FAILED",
    };
    const { refresh, secrets, built } = rig([summary([]), summary([fatal])]);

    await refresh.use((replicator) => replicate(replicator, contextWith([600_000])));
    const result = await refresh.use((replicator) => replicate(replicator, contextWith([600_000])));

    assert.equal(result.errors, 1);
    assert.deepEqual(secrets.reads, [{ fresh: false }]);
    assert.equal(built.length, 1);
  });

  it("re-reads only once: still refused after the re-read is the invocation's error", async () => {
    const { refresh, secrets, built } = rig([summary([REFUSED]), summary([REFUSED])], "still-old");

    const context = contextWith([600_000, 300_000]);

    await assert.rejects(
      refresh.use((replicator) => replicate(replicator, context)),
      (error) => isReplicatorError(error, "AUTHENTICATION_FAILED") && error.message.includes("orders/3"),
    );
    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
    assert.equal(built.length, 2);
  });

  it("with no time left after the run, reconnects for the next invocation without starting a run", async () => {
    const { refresh, secrets, built, deadlines } = rig([summary([REFUSED])]);

    const context = contextWith([600_000, RUN_SAFETY_MARGIN_MS - 500]);

    const result = await refresh.use((replicator) => replicate(replicator, context));

    assert.equal(deadlines.length, 1);
    assert.equal(result.partitions, 0);
    assert.deepEqual(secrets.reads, [{ fresh: false }, { fresh: true }]);
    assert.deepEqual(built, [
      { password: "old", closed: true },
      { password: "new", closed: false },
    ]);
  });
});
