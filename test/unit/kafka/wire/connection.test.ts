import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, it } from "node:test";
import kafkajs from "kafkajs";
import { isReplicatorError, ReplicatorError } from "../../../../lib/errors.js";
import { isTransientKafkajsError, translateKafkajsError } from "../../../../lib/kafka/wire/connection.js";
import { KafkaPartitionError } from "../../../../lib/kafka/wire/error-codes.js";
import {
  createKafkaCluster,
  type KafkajsBroker,
  kafkajsLogger,
  negotiateVersion,
} from "../../../../lib/kafka/wire/kafkajs-internals.js";
import { isAuthenticationFailure } from "../../../../lib/kafka/wire/security.js";
import { CapturingLogger } from "../../../helpers/fake-observability.js";

function brokerSupporting(apiKey: number, minVersion: number, maxVersion: number): KafkajsBroker {
  return { nodeId: 1, versions: { [apiKey]: { minVersion, maxVersion } } } as unknown as KafkajsBroker;
}

describe("negotiateVersion", () => {
  it("picks the newest implemented version the broker supports", () => {
    assert.equal(negotiateVersion(brokerSupporting(0, 0, 10), "Produce", 0, [7, 6, 5, 4, 3]), 7);
    assert.equal(negotiateVersion(brokerSupporting(0, 0, 5), "Produce", 0, [7, 6, 5, 4, 3]), 5);
  });

  it("fails with KAFKA_FATAL when there is no common version", () => {
    assert.throws(
      () => negotiateVersion(brokerSupporting(1, 0, 10), "Fetch", 1, [11]),
      (error) => isReplicatorError(error, "KAFKA_FATAL") && error.details.apiName === "Fetch",
    );
    assert.throws(() => negotiateVersion(brokerSupporting(0, 0, 10), "Fetch", 1, [11]), ReplicatorError);
  });
});

describe("translateKafkajsError", () => {
  it("keeps a ReplicatorError as it is", () => {
    const original = new ReplicatorError("OFFSET_OUT_OF_RANGE", "x");

    assert.equal(translateKafkajsError(original, "fetch"), original);
  });

  it("turns a retriable Kafka code into KAFKA_RETRIABLE naming the error, keeping the cause", () => {
    const cause = new KafkaPartitionError(6);

    const error = translateKafkajsError(cause, "fetch t/0", { topic: "t" });

    assert.equal(error.code, "KAFKA_RETRIABLE");
    assert.equal(error.cause, cause);
    assert.match(error.message, /NOT_LEADER_OR_FOLLOWER/);
    assert.deepEqual(error.details, { topic: "t", kafkaErrorCode: 6, kafkaError: "NOT_LEADER_OR_FOLLOWER" });
  });

  it("turns anything unknown into KAFKA_FATAL", () => {
    assert.equal(translateKafkajsError(new TypeError("bug"), "fetch").code, "KAFKA_FATAL");
    assert.equal(translateKafkajsError(new KafkaPartitionError(29), "fetch").code, "KAFKA_FATAL");
  });
});

/** Error classes kafkajs 2.2.4 exports at runtime but leaves out of (or mistypes in) its declarations. */
const untyped = kafkajs as unknown as {
  KafkaJSConnectionClosedError: new (message: string, where: { host: string; port: number }) => Error;
  KafkaJSNoBrokerAvailableError: new () => Error;
  KafkaJSPartialMessageError: new (message: string) => Error;
  // Declared without arguments, but kafkajs passes the broker's message.
  KafkaJSSASLAuthenticationError: new (
    message: string,
  ) => Error;
};

/** The error kafkajs 2.2.4 itself throws for a request on a Broker whose connect has not finished. */
async function brokerNotConnectedError(): Promise<unknown> {
  // Nothing listens on port 9 and nothing connects: building the seed broker opens no socket.
  const cluster = createKafkaCluster({ brokers: ["127.0.0.1:9"] });
  const pool = cluster.brokerPool as unknown as {
    createSeedBroker(): Promise<void>;
    seedBroker: KafkajsBroker;
  };
  await pool.createSeedBroker();
  try {
    await pool.seedBroker.metadata([]);
  } catch (error) {
    return error;
  } finally {
    await cluster.disconnect();
  }
  assert.fail("metadata on an unconnected broker did not throw");
}

describe("isTransientKafkajsError / translateKafkajsError on kafkajs's own errors", () => {
  it("regression: 'Broker not connected' during a concurrent connect is KAFKA_RETRIABLE, not KAFKA_FATAL", async () => {
    const cause = await brokerNotConnectedError();
    assert.ok(cause instanceof Error && cause.message === "Broker not connected", String(cause));

    const error = translateKafkajsError(cause, "fetch BIN-BI-TOPIC/6@0", { topic: "BIN-BI-TOPIC" });

    assert.equal(isTransientKafkajsError(cause), true);
    assert.equal(error.code, "KAFKA_RETRIABLE");
    assert.equal(error.retryable, true);
    assert.equal(error.cause, cause);
  });

  it("treats every connection-class error as transient", () => {
    const errors = [
      new kafkajs.KafkaJSConnectionError("Connection error: ECONNREFUSED", {
        broker: "b:9092",
        code: "ECONNREFUSED",
      }),
      new kafkajs.KafkaJSConnectionError("Not connected", { broker: "b:9092", code: "ECONNREFUSED" }),
      new untyped.KafkaJSConnectionClosedError("Connection closed by the server", { host: "b", port: 9092 }),
      new kafkajs.KafkaJSRequestTimeoutError("Request Fetch(key: 1, version: 11) timed out"),
    ];

    for (const error of errors)
      assert.equal(translateKafkajsError(error, "fetch").code, "KAFKA_RETRIABLE", error.name);
  });

  it("follows kafkajs's own retriable flag", () => {
    assert.equal(isTransientKafkajsError(new kafkajs.KafkaJSError("The producer is disconnected")), true);
    assert.equal(isTransientKafkajsError(new untyped.KafkaJSNoBrokerAvailableError()), true);
    assert.equal(isTransientKafkajsError(new kafkajs.KafkaJSError("x", { retriable: false })), false);
    assert.equal(isTransientKafkajsError(new kafkajs.KafkaJSNonRetriableError("x")), false);
    assert.equal(isTransientKafkajsError(new untyped.KafkaJSPartialMessageError("x")), false);
  });

  it("classifies protocol errors by their Kafka code", () => {
    const notLeader = new kafkajs.KafkaJSProtocolError(
      Object.assign(new Error("not leader"), { type: "NOT_LEADER_FOR_PARTITION", code: 6, retriable: true }),
    );
    const denied = new kafkajs.KafkaJSProtocolError(
      Object.assign(new Error("denied"), { type: "TOPIC_AUTHORIZATION_FAILED", code: 29, retriable: false }),
    );

    assert.equal(translateKafkajsError(notLeader, "fetch").code, "KAFKA_RETRIABLE");
    assert.equal(translateKafkajsError(denied, "fetch").code, "KAFKA_FATAL");
  });

  it("regression (issue 16): a refused login is AUTHENTICATION_FAILED, also when wrapped, so the functions see it as a code", () => {
    const refused = new untyped.KafkaJSSASLAuthenticationError("SASL PLAIN authentication failed");
    const wrapped = new kafkajs.KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 0, retryTime: 0 });
    const saslCode = new kafkajs.KafkaJSProtocolError(
      Object.assign(new Error("refused"), { type: "SASL_AUTHENTICATION_FAILED", code: 58, retriable: false }),
    );

    for (const error of [refused, wrapped, saslCode]) {
      const translated = translateKafkajsError(error, "fetch", { topic: "t" });
      assert.equal(translated.code, "AUTHENTICATION_FAILED", error.name);
      assert.equal(translated.retryable, false);
      assert.equal(translated.cause, error);
      assert.equal(isAuthenticationFailure(translated), true);
    }
    assert.equal(isAuthenticationFailure(new ReplicatorError("KAFKA_FATAL", "denied")), false);
  });

  it("keeps a plain Error that merely resembles a kafkajs one fatal", () => {
    assert.equal(translateKafkajsError(new Error("Broker not connected yet?"), "fetch").code, "KAFKA_FATAL");
    assert.equal(translateKafkajsError(new RangeError("Broker not connected"), "fetch").code, "KAFKA_FATAL");
  });
});

describe("kafkajsLogger", () => {
  it("logs kafkajs's error-response entries at debug: the caller handles the error", () => {
    const logger = new CapturingLogger();
    const connection = kafkajsLogger(logger).namespace("Connection");

    connection.error("Response CreateTopics(key: 19, version: 3)", {
      broker: "localhost:9092",
      clientId: "kafka-mirror",
      error: "Topic with this name already exists",
      correlationId: 7,
      size: 80,
    });

    assert.deepEqual(
      logger.entries.map(({ at: _, ...entry }) => entry),
      [
        {
          level: "debug",
          message: "kafkajs: Response CreateTopics(key: 19, version: 3)",
          fields: { namespace: "Connection", broker: "localhost:9092" },
        },
      ],
    );
  });

  it("keeps other kafkajs errors and warnings at their level", () => {
    const logger = new CapturingLogger();
    const root = kafkajsLogger(logger);

    root.namespace("Connection").error("Connection error: connect ECONNREFUSED", { broker: "b:9092" });
    root.namespace("BrokerPool").error("Response Metadata(key: 3, version: 6)", { broker: "b:9092" });
    root.namespace("Connection").warn("Response Fetch(key: 1, version: 11)", { broker: "b:9092" });
    root.namespace("Connection").info("Response Fetch(key: 1, version: 11)", { broker: "b:9092" });

    assert.deepEqual(
      logger.entries.map((e) => [e.level, e.message]),
      [
        ["error", "kafkajs: Connection error: connect ECONNREFUSED"],
        ["error", "kafkajs: Response Metadata(key: 3, version: 6)"],
        ["warn", "kafkajs: Response Fetch(key: 1, version: 11)"],
      ],
    );
  });
});

describe("kafkajs Connection.processData, as kafkajs-internals.ts leaves it", () => {
  it("hands on a response that arrives whole without copying it, also after an earlier response", () => {
    // Prepare: kafkajs's own processData on the state a connection keeps between responses.
    const { prototype } = createRequire(import.meta.url)("kafkajs/src/network/connection.js") as {
      prototype: { processData(this: object, data: Buffer): void };
    };
    const payloads: Buffer[] = [];
    const connection = {
      chunks: [] as Buffer[],
      bytesBuffered: 0,
      bytesNeeded: 4,
      authHandlers: null,
      requestQueue: { fulfillRequest: ({ payload }: { payload: Buffer }) => payloads.push(payload) },
    };
    const frames = [1, 2].map((n) => {
      const frame = Buffer.alloc(4 + 4 + 100_000, n);
      frame.writeInt32BE(frame.length - 4, 0);
      frame.writeInt32BE(n, 4); // correlation id
      return frame;
    });

    // Act
    for (const frame of frames) prototype.processData.call(connection, frame);

    // Assess: each payload is a view of its frame (kafkajs concatenated the second onto an empty rest).
    assert.equal(payloads.length, 2);
    for (const [i, payload] of payloads.entries()) {
      assert.equal(payload.buffer, frames[i]?.buffer, `response ${i + 1} was copied`);
      assert.equal(payload.length, 100_000);
    }
  });
});
