// The Kafka cluster a contract test runs against: librdkafka's patched mock (mock-kafka.ts) or
// real Apache Kafka (real-kafka.ts), chosen by KAFKA_TESTBED (`mock`, the default, or `real`).
// A test that states a guarantee starts its clusters here, so the same assertions run against
// both brokers (scripts/contract-tests.mjs lists those files; `npm test` runs them on each).
// Both sides offer what both can do; what only the mock can (injected request errors, RTT,
// launcher commands) is reached through `kind === "mock"`, and a test that needs it says what
// it proves on real Kafka instead.
import { Kafka, logLevel } from "kafkajs";
import { type MockKafka, startMockKafka } from "./mock-kafka.js";
import { type RealKafka, type ScramUser, startRealKafka } from "./real-kafka.js";
import type { TestPki } from "./tls-certs.js";

export type TestbedKind = "mock" | "real";

/** The broker the contract tests run against in this process. */
export const KAFKA_TESTBED: TestbedKind = testbedFromEnvironment(process.env.KAFKA_TESTBED);

export function testbedFromEnvironment(value: string | undefined): TestbedKind {
  if (value === undefined || value === "" || value === "mock") return "mock";
  if (value === "real") return "real";
  throw new Error(`KAFKA_TESTBED must be "mock" or "real", not ${JSON.stringify(value)}`);
}

export interface TestKafkaOptions {
  /** 1 or 3 brokers (ids 1..N). Real brokers cost a JVM each: ask for 3 only to move or kill one. */
  readonly brokers: 1 | 3;
  /** Real Kafka only: transaction.max.timeout.ms (the mock models no transaction timeouts). */
  readonly transactionMaxTimeoutMs?: number;
  /** Real Kafka only: an SSL listener (mutual TLS) with these certificates. */
  readonly tls?: TestPki;
  /** Real Kafka only: a SASL_SSL listener with these SCRAM users; needs `tls`. */
  readonly scramUsers?: readonly ScramUser[];
  /** Overrides KAFKA_TESTBED, for a test that only one broker can run. */
  readonly kind?: TestbedKind;
}

interface TestKafkaBase {
  readonly bootstrapServers: string[];
  readonly brokerIds: readonly number[];
  /**
   * Replication factor defaults to min(3, brokers). Resolves once every partition has a leader.
   * Configs are set at creation (real Kafka; on the mock through our CreateTopics handler).
   */
  createTopic(
    name: string,
    partitions: number,
    replicationFactor?: number,
    configs?: Readonly<Record<string, string>>,
  ): Promise<void>;
  deleteTopic(name: string): Promise<void>;
  /** DeleteRecords: the partition's log start becomes `beforeOffset`, as retention would make it. */
  deleteRecords(topic: string, partition: number, beforeOffset: number): Promise<void>;
  /** The broker stops answering (mock: broker-down; real: SIGKILL of its JVM). */
  brokerDown(brokerId: number): Promise<void>;
  /** Back on its ports (real: restarted on its data, resolves once it serves Metadata). */
  brokerUp(brokerId: number): Promise<void>;
  /** Makes `brokerId` the partition's leader (real: it must be in the ISR; a new leader epoch). */
  moveLeader(topic: string, partition: number, brokerId: number): Promise<void>;
  /** Idempotent. */
  stop(): Promise<void>;
}

export type TestKafka =
  | (TestKafkaBase & { readonly kind: "mock"; readonly mock: MockKafka })
  | (TestKafkaBase & { readonly kind: "real"; readonly real: RealKafka });

export async function startTestKafka(opts: TestKafkaOptions): Promise<TestKafka> {
  const kind = opts.kind ?? KAFKA_TESTBED;
  if (kind === "real") return realTestKafka(await startRealKafka(realOptions(opts)));
  if (opts.tls || opts.scramUsers || opts.transactionMaxTimeoutMs !== undefined) {
    throw new Error("startTestKafka: tls, scramUsers and transactionMaxTimeoutMs need real Kafka");
  }
  return mockTestKafka(await startMockKafka({ brokers: opts.brokers }));
}

function realOptions(opts: TestKafkaOptions) {
  return {
    brokers: opts.brokers,
    ...(opts.transactionMaxTimeoutMs === undefined
      ? {}
      : { transactionMaxTimeoutMs: opts.transactionMaxTimeoutMs }),
    ...(opts.tls ? { tls: opts.tls } : {}),
    ...(opts.scramUsers ? { scramUsers: opts.scramUsers } : {}),
  };
}

/** A mock a test started itself (with options of its own), behind the common interface. */
export function mockTestKafka(mock: MockKafka): TestKafka {
  const brokerIds = mock.bootstrapServers.map((_, i) => i + 1);
  return {
    kind: "mock",
    mock,
    bootstrapServers: mock.bootstrapServers,
    brokerIds,
    async createTopic(name, partitions, replicationFactor, configs) {
      if (configs === undefined || Object.keys(configs).length === 0) {
        await mock.createTopic(name, partitions, replicationFactor);
        return;
      }
      // The launcher's create-topic takes no configs; CreateTopics (our handler) does.
      await withAdmin(mock.bootstrapServers, async (admin) => {
        const configEntries = Object.entries(configs).map(([n, value]) => ({ name: n, value }));
        const rf = replicationFactor ?? Math.min(3, brokerIds.length);
        await admin.createTopics({
          topics: [{ topic: name, numPartitions: partitions, replicationFactor: rf, configEntries }],
        });
      });
    },
    deleteTopic: (name) => mock.deleteTopic(name),
    deleteRecords: (topic, partition, beforeOffset) =>
      mock.command(`delete-records ${topic} ${partition} ${beforeOffset}`).then(() => undefined),
    brokerDown: (id) => mock.brokerDown(id),
    brokerUp: (id) => mock.brokerUp(id),
    moveLeader: (topic, partition, id) => mock.setLeader(topic, partition, id),
    stop: () => mock.stop(),
  };
}

function realTestKafka(real: RealKafka): TestKafka {
  return {
    kind: "real",
    real,
    bootstrapServers: real.bootstrapServers,
    brokerIds: real.brokerIds,
    createTopic: (name, partitions, replicationFactor, configs) =>
      real.createTopic(name, partitions, replicationFactor, configs),
    deleteTopic: (name) => real.deleteTopic(name),
    deleteRecords: (topic, partition, beforeOffset) =>
      withAdmin(real.bootstrapServers, async (admin) => {
        // kafkajs's deleteTopicRecords finds the leaders in metadata it loaded before.
        await admin.fetchTopicMetadata({ topics: [topic] });
        await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(beforeOffset) }] });
      }),
    brokerDown: (id) => real.killBroker(id),
    brokerUp: (id) => real.restartBroker(id),
    moveLeader: (topic, partition, id) => real.moveLeader(topic, partition, id),
    stop: () => real.stop(),
  };
}

/** A kafkajs admin for one call: an independent client, not the code under test. */
async function withAdmin<T>(
  brokers: string[],
  call: (admin: ReturnType<Kafka["admin"]>) => Promise<T>,
): Promise<T> {
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING, clientId: "kafka-testbed" }).admin();
  await admin.connect();
  try {
    return await call(admin);
  } finally {
    await admin.disconnect();
  }
}
