import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Context } from "aws-lambda";
import {
  createRuntime,
  once,
  STALL_AFTER_VARIABLE,
  scheduledFunction,
  serviceName,
} from "../../../functions/runtime.js";
import { isReplicatorError } from "../../../lib/errors.js";
import { PowertoolsLoggerAdapter } from "../../../lib/observability/powertools-logger.js";

const BASE = {
  KAFKA_MIRROR_SOURCE_BROKERS: "s1:9094,s2:9094",
  KAFKA_MIRROR_TARGET_BROKERS: "t1:9092",
  KAFKA_MIRROR_TOPICS_WHITELIST: "A|B",
  // What the stack sets for empty parameters.
  KAFKA_MIRROR_TOPICS_BLACKLIST: "",
  KAFKA_MIRROR_SOURCE_SECRET_ARN: "",
  KAFKA_MIRROR_TARGET_SECRET_ARN: "",
  KAFKA_MIRROR_TARGET_SASL_MECHANISM: "none",
  AWS_REGION: "eu-west-1",
};

function quietLogger(): PowertoolsLoggerAdapter {
  const logger = new PowertoolsLoggerAdapter();
  logger.powertools.setLogLevel("SILENT");
  return logger;
}

describe("createRuntime", () => {
  it("parses the functions' environment, empty parameters included, and maps TLS", async () => {
    const runtime = await createRuntime(quietLogger(), {
      ...BASE,
      KAFKA_MIRROR_SOURCE_TLS: "true",
      [STALL_AFTER_VARIABLE]: "60000",
      POWERTOOLS_SERVICE_NAME: "KafkaMirror-eu-west-1",
    });
    try {
      assert.deepEqual(runtime.config.source.brokers, ["s1:9094", "s2:9094"]);
      assert.equal(runtime.config.topics.whitelist, "A|B");
      assert.equal(runtime.config.topics.blacklist, undefined);
      assert.deepEqual(runtime.security.source, { ssl: { rejectUnauthorized: true } });
      assert.deepEqual(runtime.security.target, {});
      assert.equal(runtime.serviceName, "KafkaMirror-eu-west-1");
    } finally {
      runtime.dynamodb.destroy();
    }
  });

  it("accepts KAFKA_MIRROR_CRC32C, which the record codec reads itself", async () => {
    const runtime = await createRuntime(quietLogger(), { ...BASE, KAFKA_MIRROR_CRC32C: "js" });
    try {
      assert.equal(runtime.config.topics.whitelist, "A|B");
    } finally {
      runtime.dynamodb.destroy();
    }
  });

  it("signs MSK IAM tokens for the function's region", async () => {
    const runtime = await createRuntime(quietLogger(), {
      ...BASE,
      KAFKA_MIRROR_TARGET_TLS: "true",
      KAFKA_MIRROR_TARGET_SASL_MECHANISM: "aws-msk-iam",
    });
    try {
      assert.equal(runtime.security.target.sasl?.mechanism, "oauthbearer");
    } finally {
      runtime.dynamodb.destroy();
    }
  });

  it("refuses a misspelt variable and a SASL mechanism without its secret", async () => {
    await assert.rejects(
      createRuntime(quietLogger(), { ...BASE, KAFKA_MIRROR_TOPICS_WHITELST: "A" }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") && /KAFKA_MIRROR_TOPICS_WHITELST/.test(error.message),
    );
    await assert.rejects(
      createRuntime(quietLogger(), { ...BASE, KAFKA_MIRROR_SOURCE_SASL_MECHANISM: "scram-sha-512" }),
      (error) => isReplicatorError(error, "CONFIG_INVALID") && /source\.secretArn/.test(error.message),
    );
  });

  it("takes passwords from secretArn only: a credentials file is refused by name", async () => {
    await assert.rejects(
      createRuntime(quietLogger(), {
        ...BASE,
        KAFKA_MIRROR_SOURCE_SASL_MECHANISM: "plain",
        KAFKA_MIRROR_SOURCE_CREDENTIALS_FILE: "/tmp/creds.json",
      }),
      (error) =>
        isReplicatorError(error, "CONFIG_INVALID") &&
        /source\.secretArn: required with saslMechanism plain/.test(error.message) &&
        /source\.credentialsFile: not read by the functions/.test(error.message),
    );
  });

  it("names the service after the stack, with a default", () => {
    assert.equal(serviceName({ POWERTOOLS_SERVICE_NAME: "KafkaMirror-us-east-1" }), "KafkaMirror-us-east-1");
    assert.equal(serviceName({}), "kafka-mirror");
  });
});

describe("once", () => {
  it("builds once for concurrent and later callers, and again after a failed build", async () => {
    let builds = 0;
    let fail = true;
    const get = once(async () => {
      builds++;
      if (fail) throw new Error("cold start failed");
      return { n: builds };
    });
    await assert.rejects(get(), /cold start failed/);
    fail = false;
    const [a, b] = await Promise.all([get(), get()]);
    assert.equal(a, b);
    assert.equal(await get(), a);
    assert.equal(builds, 2);
  });
});

describe("scheduledFunction", () => {
  const context = {
    functionName: "KafkaMirror-Lag",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:eu-west-1:123456789012:function:KafkaMirror-Lag",
    memoryLimitInMB: "512",
    awsRequestId: "request-1",
    getRemainingTimeInMillis: () => 55_000,
  } as unknown as Context;

  it("refuses a schedule written for another function before connecting, and runs its own kind and manual invokes", async () => {
    const connected: string[] = [];
    const handler = scheduledFunction(
      "lag",
      () => {
        connected.push("connect");
        return { close: async () => {} };
      },
      async () => "ran",
    );
    const quiet = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.POWERTOOLS_LOG_LEVEL = "SILENT";
    try {
      await assert.rejects(
        handler({ kind: "replicate", worker: 1 }, context),
        (error) =>
          isReplicatorError(error, "CONFIG_INVALID") &&
          /function lag was invoked by a schedule of kind "replicate"; it takes only "lag"/.test(
            error.message,
          ),
      );
      assert.deepEqual(connected, []);
      // Its own kind, and an event without one, get past the check to the runtime (which this
      // environment cannot build: no config variables).
      for (const event of [{ kind: "lag" }, {}]) {
        await assert.rejects(
          handler(event, context),
          (error) => isReplicatorError(error, "CONFIG_INVALID") && !/schedule of kind/.test(error.message),
        );
      }
    } finally {
      if (quiet === undefined) delete process.env.POWERTOOLS_LOG_LEVEL;
      else process.env.POWERTOOLS_LOG_LEVEL = quiet;
    }
  });
});
