// Fenced writes into a real Apache Kafka 4.1 target (test/helpers/real-kafka.ts: one broker whose
// transaction.max.timeout.ms is 60 s, frozen with SIGSTOP where a test says so; the source is the
// mock test bed). Named after the bugs they pin: the transaction timeout was never checked against
// the broker's cap (every InitProducerId refused, nothing copied); a run that ended with a write's
// transaction open left read_committed consumers stuck at it until the transaction timeout; and
// EndTxn's retries could outlive the run's deadline.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { Kafka, logLevel } from "kafkajs";
import { type MirrorConfigInput, parseConfig } from "../../../lib/config/schema.js";
import type { LogFields, TargetWriter } from "../../../lib/core/ports.js";
import { createEmbeddedLeaseClient } from "../../../lib/dynamodb/embedded/client.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { createLeaseTable } from "../../../lib/dynamodb/lease-table.js";
import { createReplicator, type ReplicatorDependencies } from "../../../lib/replicator.js";
import { CapturingLogger, CapturingMetrics } from "../../helpers/fake-observability.js";
import { latestOffset } from "../../helpers/kafka-raw-requests.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { ClusterView } from "../../helpers/partition-data.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";
import { writerWith } from "../../helpers/writer-with.js";

const CAP_MS = 60_000;
const BROKER = 1;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** A CapturingLogger that also tells a test of each debug and info line as it is logged. */
class HookLogger extends CapturingLogger {
  onLine: (message: string) => void = () => {};
  override debug(message: string, fields: LogFields = {}): void {
    super.debug(message, fields);
    this.onLine(message);
  }
  override info(message: string, fields: LogFields = {}): void {
    super.info(message, fields);
    this.onLine(message);
  }
}

describe("fenced writes into a real Kafka target", () => {
  let kafka: RealKafka;
  let source: MockKafka;
  let stateDir: string;
  let dynamodb: DynamoDBClient;

  before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), "kafka-mirror-txn-bounds-"));
    [kafka, source, dynamodb] = await Promise.all([
      startRealKafka({ brokers: 1, transactionMaxTimeoutMs: CAP_MS }),
      startMockKafka({ brokers: 1 }),
      createEmbeddedLeaseClient({ stateDir }),
    ]);
  });

  after(async () => {
    kafka?.thawBroker(BROKER);
    dynamodb?.destroy();
    await Promise.allSettled([kafka?.stop(), source?.stop(), stopLeaseServer(stateDir)]);
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** A source topic of `batches` batches of `perBatch` records of `bytes` bytes each. */
  async function sourceTopic(batches: number, perBatch: number, bytes = 40): Promise<string> {
    const topic = `TXN-${randomUUID()}`;
    await source.createTopic(topic, 1, 1);
    const producer = new Kafka({ brokers: source.bootstrapServers, logLevel: logLevel.NOTHING }).producer();
    await producer.connect();
    try {
      for (let b = 0; b < batches; b++) {
        const messages = Array.from({ length: perBatch }, (_, i) => ({
          partition: 0,
          key: Buffer.from([b >> 8, b & 0xff, i]),
          value: Buffer.alloc(bytes, (b + i) & 0xff),
        }));
        await producer.send({ topic, acks: -1, messages });
      }
    } finally {
      await producer.disconnect();
    }
    return topic;
  }

  /** A replicator from the mock source into the real target, its leases in a table of its own. */
  async function replicatorFor(
    topic: string,
    overrides: {
      readonly leases: Omit<NonNullable<MirrorConfigInput["leases"]>, "table">;
      readonly target: Omit<MirrorConfigInput["target"], "brokers">;
      readonly batch?: MirrorConfigInput["batch"];
    },
    logger: CapturingLogger,
    decorateTarget?: ReplicatorDependencies["decorateTarget"],
  ) {
    const table = `leases-${randomUUID()}`;
    await createLeaseTable(dynamodb, table);
    const config = parseConfig({
      source: { brokers: source.bootstrapServers, alias: "src", requestTimeoutMs: 5_000 },
      target: { ...overrides.target, brokers: kafka.bootstrapServers },
      topics: { whitelist: topic, discoveryIntervalMs: 600_000 },
      batch: { maxWaitMs: 100, ...overrides.batch },
      leases: { table, rebalanceIntervalMs: 1_000, ...overrides.leases },
    });
    const metrics = new CapturingMetrics();
    const deps = { dynamodb, logger, metrics, workerId: `w-${randomUUID().slice(0, 8)}` };
    return createReplicator(config, decorateTarget === undefined ? deps : { ...deps, decorateTarget });
  }

  const offsets = async (topic: string) => {
    const [address] = kafka.bootstrapServers;
    if (address === undefined) throw new Error("no broker address");
    const [stable, end] = await Promise.all([
      latestOffset(address, topic, 0, "read_committed"),
      latestOffset(address, topic, 0, "read_uncommitted"),
    ]);
    return { stable, end };
  };

  it("asks for the broker's cap when it is below the wanted timeout, and copies", async () => {
    // Prepare: leases of 30 s want 90 s; a write's transaction needs 34 s.
    const topic = await sourceTopic(3, 10);
    const logger = new HookLogger();
    const replicator = await replicatorFor(
      topic,
      { leases: { durationMs: 30_000, renewIntervalMs: 5_000 }, target: { requestTimeoutMs: 2_000 } },
      logger,
    );
    const view = new ClusterView(kafka.bootstrapServers);

    try {
      // Act
      const summary = await replicator.worker.replicate(Date.now() + 60_000, { stopWhenCaughtUp: true });

      // Assess
      assert.deepEqual(summary.errors, []);
      assert.equal(summary.endReason, "caught-up");
      assert.equal((await view.read({ topic, partition: 0 })).length, 30);
      const settled = logger.at("info").find((l) => l.message === "transaction timeout settled");
      assert.equal(settled?.fields.ms, CAP_MS);
      assert.equal(settled?.fields.wantedMs, 90_000);
    } finally {
      await Promise.allSettled([replicator.close(), view.close()]);
    }
  });

  it("refuses to start when the cap is below what a write's transaction needs, naming the values", async () => {
    // Leases of 60 s with 2 x 2 s of write margin need 64 s.
    const topic = await sourceTopic(1, 10);
    const replicator = await replicatorFor(
      topic,
      { leases: { durationMs: 60_000, renewIntervalMs: 10_000 }, target: { requestTimeoutMs: 2_000 } },
      new HookLogger(),
    );
    try {
      await assert.rejects(replicator.worker.replicate(Date.now() + 30_000, { stopWhenCaughtUp: true }), {
        code: "CONFIG_INVALID",
        message:
          /transaction\.max\.timeout\.ms \(60000 ms\) is below the 64000 ms .* leases\.durationMs \(60000\) .* asks for 180000 ms .* lower leases\.durationMs to at most 56000 ms/,
      });
    } finally {
      await replicator.close();
    }
  });

  it("leaves no transaction open when a run is stopped during a write of unknown outcome", async () => {
    // Prepare: fetches of one batch, a write holding up to four (readAheadDepth at the defaults),
    // one produce request each; the third one's meets a frozen broker, and the run is stopped
    // (SIGTERM in the CLI) at that moment. The broker thaws after the request timed out, so the
    // request lands in the write's open transaction. 20 batches: five writes or more.
    const requestTimeoutMs = 3_000;
    const topic = await sourceTopic(20, 10);
    const logger = new HookLogger();
    const replicator = await replicatorFor(
      topic,
      {
        leases: { durationMs: 10_000, renewIntervalMs: 2_000 },
        target: { requestTimeoutMs },
        batch: { maxRecords: 10 },
      },
      logger,
    );
    const stop = new AbortController();
    let sends = 0;
    let thawed: Promise<number> = Promise.resolve(0);
    logger.onLine = (message) => {
      if (message !== "produce sent" || ++sends !== 3) return;
      kafka.freezeBroker(BROKER);
      stop.abort();
      thawed = sleep(requestTimeoutMs + 500).then(() => {
        kafka.thawBroker(BROKER);
        return Date.now();
      });
    };

    try {
      // Act
      const summary = await replicator.worker.replicate(Date.now() + 60_000, { signal: stop.signal });
      const endedAt = Date.now();

      // Assess: a second after the run's end (or the thaw, if later: the thawed broker appends the
      // request to the transaction within it), read_committed readers reach the partition's end.
      assert.equal(summary.endReason, "aborted");
      await sleep(Math.max(endedAt, await thawed) + 1_000 - Date.now());
      const seen = await offsets(topic);
      assert.equal(
        seen.stable,
        seen.end,
        `the last stable offset stays at ${seen.stable}, before ${seen.end}`,
      );
    } finally {
      kafka.thawBroker(BROKER);
      await replicator.close();
    }
  });

  it("ends by its deadline when the broker freezes under its last write's EndTxn", async () => {
    // Prepare: writes of 20 target batches sent one at a time. The first write after `armAt` is
    // held until `sendAt`, a request timeout or so before a write must stop to leave its commit
    // room; each of its produce requests meets a broker frozen for half a request timeout (slow
    // answers), and when the write stops at its deadline the broker freezes for good, so its
    // EndTxn is never answered. The lease runs to the run's deadline, as a run's last does.
    const R = 5_000;
    // Enough that the copy is still going at armAt: with 250 batches one CI run and three runs
    // right after it ended about 7 s in, no write held (the copy done, the partition given up).
    const topic = await sourceTopic(1_000, 20, 700);
    const startedAt = Date.now();
    const deadline = startedAt + 18_000;
    const armAt = deadline - 2 * R - 1_500;
    const sendAt = deadline - 2 * R - 500;
    let armed: "waiting" | "writing" | "done" = "waiting";
    let frozenForGood = false;
    const logger = new HookLogger();
    logger.onLine = (message) => {
      if (armed !== "writing") return;
      if (message === "produce sent") {
        kafka.freezeBroker(BROKER);
        setTimeout(() => kafka.thawBroker(BROKER), R / 2);
      } else if (message === "write stopped at its deadline") {
        kafka.freezeBroker(BROKER);
        frozenForGood = true;
      }
    };
    const holdArmedWrite = (writer: TargetWriter): TargetWriter =>
      writerWith(writer, {
        async write(tp, records, stamp, leaseDeadline, runDeadline) {
          if (armed !== "waiting" || Date.now() < armAt) {
            return writer.write(tp, records, stamp, leaseDeadline, runDeadline);
          }
          armed = "writing";
          await sleep(sendAt - Date.now());
          try {
            return await writer.write(tp, records, stamp, leaseDeadline, runDeadline);
          } finally {
            armed = "done";
          }
        },
      });
    const replicator = await replicatorFor(
      topic,
      {
        leases: { durationMs: 20_000, renewIntervalMs: 4_000 },
        target: { requestTimeoutMs: R, maxBatchBytes: 1_024, maxInFlightBatches: 1 },
        batch: { maxRecords: 20, maxBytes: 1_024 },
      },
      logger,
      holdArmedWrite,
    );

    try {
      // Act
      await replicator.worker.replicate(deadline);
      const lateMs = Date.now() - deadline;

      // Assess
      assert.equal(armed, "done", "the run was still copying when the write was to be held");
      assert.ok(frozenForGood, "the held write's EndTxn met a frozen broker");
      assert.ok(lateMs <= 1_000, `the run ended ${lateMs} ms after its deadline`);
    } finally {
      kafka.thawBroker(BROKER);
      await replicator.close();
    }
  });
});
