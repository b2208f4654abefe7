/**
 * The commands retry a Kafka call that failed transiently (adapters make one attempt each):
 * brokers answer the first requests of one API with REQUEST_TIMED_OUT, a retriable error that
 * is not re-routed, and status and verify still succeed, saying on stderr what they retried.
 * A failure no retry changes (an ACL) ends the command at the first attempt, in one line.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadConfigFile } from "../../../lib/cli/config-file.js";
import type { StatusRow } from "../../../lib/cli/status-rows.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import type { VerifyReport } from "../../../lib/verify/verify-mirror.js";
import { leaseStoreFor } from "../../../lib/wiring.js";
import { runCliCaptured as cli } from "../../helpers/cli.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { ApiKey, type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";

/** Kafka's REQUEST_TIMED_OUT: retriable, and not a reason to re-route within one attempt. */
const REQUEST_TIMED_OUT = 7;
/** Kafka's TOPIC_AUTHORIZATION_FAILED: not retriable, an ACL says no. */
const TOPIC_AUTHORIZATION_FAILED = 29;
const PARTITIONS = 2;
const PER_PARTITION = 50;

describe("kafka-mirror commands retry transient Kafka failures", () => {
  const topic = `RETRY-${randomUUID()}`;
  let source: MockKafka;
  let target: MockKafka;
  let dir: string;
  let config: string;

  before(async () => {
    [source, target] = await Promise.all([startMockKafka({ brokers: 1 }), startMockKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-retries-"));
    config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      [
        "source:",
        `  brokers: ${source.bootstrapServers.join(",")}`,
        "  requestTimeoutMs: 2000",
        "target:",
        `  brokers: ${target.bootstrapServers.join(",")}`,
        "  requestTimeoutMs: 2000",
        "topics:",
        `  whitelist: "${topic}"`,
        "batch:",
        "  maxWaitMs: 100",
        "",
      ].join("\n"),
    );
    // The leases of a mirror (status refuses to read a store that has none).
    const leases = await leaseStoreFor(await loadConfigFile(config), "embedded", {
      stateDir: join(dir, "state"),
    });
    try {
      await leases.store.ensure([0, 1].map((partition) => ({ topic, partition })));
    } finally {
      leases.close();
    }
    // The same records on both sides: a finished mirror.
    for (const kafka of [source, target]) {
      await kafka.createTopic(topic, PARTITIONS);
      const writer = new KafkaPartitionWriter({ brokers: kafka.bootstrapServers });
      try {
        for (let p = 0; p < PARTITIONS; p++) {
          await writer.write(
            { topic, partition: p },
            makeRecords(PER_PARTITION, p).map((r, i) => ({ ...r, offset: i })),
          );
        }
      } finally {
        await writer.close();
      }
    }
  });

  after(async () => {
    await stopLeaseServer(join(dir, "state"));
    await Promise.allSettled([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("status retries ListOffsets answered with REQUEST_TIMED_OUT", async () => {
    // Prepare
    await source.pushRequestErrors(ApiKey.ListOffsets, [REQUEST_TIMED_OUT, REQUEST_TIMED_OUT]);

    // Act
    const status = await cli(["status", "--config", config, "--state-dir", join(dir, "state"), "--json"]);

    // Assess
    assert.equal(status.code, 0, status.stderr);
    const rows = (JSON.parse(status.stdout) as { partitions: StatusRow[] }).partitions;
    assert.deepEqual(
      rows.map((r) => [r.partition, r.logEnd]),
      [
        [0, PER_PARTITION],
        [1, PER_PARTITION],
      ],
    );
    assert.match(status.stderr, /listing offsets of RETRY-\S+ failed, retrying/);
  });

  it("verify retries fetches answered with REQUEST_TIMED_OUT, on both sides", async () => {
    // Prepare
    await source.pushRequestErrors(ApiKey.Fetch, [REQUEST_TIMED_OUT, REQUEST_TIMED_OUT]);
    await target.pushRequestErrors(ApiKey.Fetch, [REQUEST_TIMED_OUT]);

    // Act
    const verify = await cli(["verify", "--config", config, "--json"]);

    // Assess
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout) as VerifyReport;
    assert.deepEqual(
      report.partitions.map((p) => [p.sourceRecords, p.targetRecords, p.mismatch]),
      [
        [PER_PARTITION, PER_PARTITION, null],
        [PER_PARTITION, PER_PARTITION, null],
      ],
    );
    assert.match(verify.stderr, /fetching RETRY-\S+ failed, retrying/);
  });

  it("status stops at the first ListOffsets answered with TOPIC_AUTHORIZATION_FAILED", async () => {
    // Prepare: more refusals than the retry budget could use, on the only broker.
    const queued = 20;
    const refusal = { code: TOPIC_AUTHORIZATION_FAILED, rttMs: 0 };
    await source.pushBrokerRequestErrors(1, ApiKey.ListOffsets, Array(queued).fill(refusal));

    // Act
    const startedAt = Date.now();
    const status = await cli(["status", "--config", config, "--state-dir", join(dir, "state")]);
    const elapsedMs = Date.now() - startedAt;
    // The refusals left stay queued on broker 1 (the launcher clears only the cluster-wide
    // stack): keep this test the last of the file.
    const left = await source.brokerErrorCount(1, ApiKey.ListOffsets);

    // Assess: one attempt (its two ListOffsets requests, earliest and latest), no retry, one line.
    assert.equal(status.code, 1, status.stderr);
    assert.equal(queued - left, 2, `ListOffsets requests answered: ${queued - left}`);
    assert.doesNotMatch(status.stderr, /retrying/);
    assert.match(status.stderr, /^kafka-mirror: [^\n]*TOPIC_AUTHORIZATION_FAILED[^\n]*\n$/);
    assert.ok(elapsedMs < 5_000, `${elapsedMs} ms`);
  });
});
