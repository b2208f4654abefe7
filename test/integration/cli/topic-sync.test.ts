/**
 * A long-running `kafka-mirror run` (not --once) over two clusters: real Kafka (KAFKA_TESTBED=real),
 * whose broker validates configs, enforces max.message.bytes and propagates new partitions on
 * its own time, or the mock, whose topic admin handlers are ours (testbed/mock-kafka/topic-*.c): a topic created mid-run arrives within 30 s
 * with the source's configs (a compacted source gives a compacted copy with the same retention);
 * a source grown from 4 to 8 partitions mid-run ends with 8 target partitions, all copied, no
 * error; a target-only setting survives sync; a record as large as the source's max.message.bytes
 * allows is copied (on real Kafka only because the target's limit has our headroom); `plan`
 * reports drift before and a clean plan after.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { MirrorRecord } from "../../../lib/core/model.js";
import { MAX_MESSAGE_BYTES_HEADROOM } from "../../../lib/core/plan/config-sync.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { encodeRecordBatch } from "../../../lib/kafka/codec/record-batch.js";
import { KafkaPartitionWriter } from "../../../lib/kafka/produce/target-writer.js";
import { CLI_BIN, runCliCaptured } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { makeRecords } from "../../helpers/fake-cluster.js";
import { eventually } from "../../helpers/kafka-eventually.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { ClusterView, committedCount, produceRetrying } from "../../helpers/partition-data.js";

const GROWN = "ORDERS";
const NEW = "USERS-COMPACTED";
const BIG = "BLOBS";
const BIG_LIMIT = 3 * 1024 * 1024;

/**
 * One record whose batch is exactly `limit` bytes, as large as a topic with max.message.bytes
 * `limit` takes (the broker compares the whole batch). Random bytes, so no codec shrinks it. Its
 * copy is larger by our provenance header: real Kafka refuses it unless the target's limit
 * has the headroom (the mock checks no size at all).
 */
async function recordFilling(limit: number): Promise<MirrorRecord> {
  const withValue = (length: number): MirrorRecord => ({
    offset: 0,
    timestamp: Date.now(),
    key: Buffer.from("k"),
    value: randomBytes(length),
    headers: [],
  });
  const batchSize = async (record: MirrorRecord) =>
    (
      await encodeRecordBatch([record], {
        compression: "none",
        producerId: 0n,
        producerEpoch: 0,
        baseSequence: 0,
      })
    ).length;
  const probe = limit - 1024;
  const record = withValue(probe + limit - (await batchSize(withValue(probe))));
  assert.equal(await batchSize(record), limit, "the record's batch is exactly at the limit");
  return record;
}

function records(count: number, tag: number): MirrorRecord[] {
  return makeRecords(count, tag).map((r, i) => ({ ...r, offset: i }));
}

const configs = (entries: Record<string, string>) => new Map(Object.entries(entries));

interface PlanJson {
  inSync: boolean;
  selected: {
    source: string;
    action: string;
    partitions: number;
    targetPartitions: number | null;
    configChanges: { name: string; from: string | null; to: string }[];
    targetOnly: string[];
  }[];
  errors: unknown[];
}

describe("kafka-mirror run: topics that appear, grow and change while it runs", () => {
  let source: TestKafka;
  let target: TestKafka;
  let dir: string;
  let stateDir: string;
  let config: string;
  let writer: KafkaPartitionWriter;
  let sourceView: ClusterView;
  let targetView: ClusterView;
  let run: ChildProcess | undefined;
  let runOutput = "";

  before(async () => {
    [source, target] = await Promise.all([startTestKafka({ brokers: 1 }), startTestKafka({ brokers: 1 })]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-topic-sync-"));
    stateDir = join(dir, "state");
    config = join(dir, "mirror.yaml");
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: target.bootstrapServers,
        whitelist: `${GROWN}|${NEW}|${BIG}`,
      }),
    );
    writer = new KafkaPartitionWriter({ brokers: source.bootstrapServers });
    sourceView = new ClusterView(source.bootstrapServers);
    targetView = new ClusterView(target.bootstrapServers);
    await sourceView.admin.createTopics([{ name: GROWN, partitions: 4, replicationFactor: 1 }]);
    for (let p = 0; p < 4; p++) await writer.write({ topic: GROWN, partition: p }, records(50, p));
  });

  after(async () => {
    run?.kill("SIGKILL");
    await Promise.allSettled([writer?.close(), sourceView?.close(), targetView?.close()]);
    await stopLeaseServer(stateDir);
    await Promise.all([source?.stop(), target?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  const plan = async (): Promise<{ code: number; json: PlanJson }> => {
    const result = await runCliCaptured(["plan", "--config", config, "--json"]);
    return { code: result.code, json: JSON.parse(result.stdout) as PlanJson };
  };

  const copied = (topic: string, partition: number) => committedCount(targetView, { topic, partition });
  const produce = (topic: string, partition: number, batch: MirrorRecord[]) =>
    produceRetrying(writer, { topic, partition }, batch);

  const waitFor = async (what: string, done: () => Promise<boolean>, limitMs: number): Promise<number> => {
    const start = Date.now();
    while (!(await done())) {
      if (Date.now() - start > limitMs)
        assert.fail(`${what}: not within ${limitMs} ms\n${runOutput.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return Date.now() - start;
  };

  it("plan shows the drift before anything ran: the target is missing", async () => {
    const { code, json } = await plan();

    assert.equal(code, 0, "drift is not an error");
    assert.equal(json.inSync, false);
    assert.deepEqual(
      json.selected.map((s) => [s.source, s.action, s.targetPartitions]),
      [[GROWN, "create", null]],
    );
  });

  it("picks up a new topic within 30 s, grows a grown one, syncs configs, copies a record at the size limit", async (t) => {
    // Prepare: a run left running, with the default discovery interval (10 s).
    const child = spawn(process.execPath, [CLI_BIN, "run", "--config", config, "--state-dir", stateDir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    run = child;
    for (const stream of [child.stdout, child.stderr]) {
      stream.on("data", (c: Buffer) => {
        runOutput += c.toString("utf8");
      });
    }
    await waitFor("the first topic copied", async () => (await copied(GROWN, 3)) === 50, 60_000);

    // Act 1: a compacted topic appears on the source, with records written before anyone saw it.
    await sourceView.admin.createTopics([
      {
        name: NEW,
        partitions: 2,
        replicationFactor: 1,
        configs: configs({
          "cleanup.policy": "compact",
          "min.compaction.lag.ms": "60000",
          "delete.retention.ms": "3600000",
          "retention.ms": "-1",
          "min.insync.replicas": "1",
        }),
      },
    ]);
    for (let p = 0; p < 2; p++) await writer.write({ topic: NEW, partition: p }, records(40, 10 + p));
    const arrival = await waitFor(
      "the new topic copied",
      async () => (await copied(NEW, 0)) === 40 && (await copied(NEW, 1)) === 40,
      30_000,
    );

    // Assess 1: within 30 s, from offset 0, compacted with the same retention settings.
    assert.ok(arrival < 30_000, `arrived after ${arrival} ms`);
    t.diagnostic(`the new topic was copied ${arrival} ms after it was created`);
    const [newConfigs] = [(await targetView.admin.describeTopicConfigs([NEW])).get(NEW)];
    assert.deepEqual(Object.fromEntries(newConfigs ?? []), {
      "cleanup.policy": "compact",
      "min.compaction.lag.ms": "60000",
      "delete.retention.ms": "3600000",
      "retention.ms": "-1",
    });

    // Act 2: the first topic grows from 4 to 8 partitions and gets records everywhere; the
    // target gets a setting of its own and the source a new retention.
    await sourceView.admin.createPartitions([{ topic: GROWN, count: 8 }]);
    for (let p = 0; p < 8; p++) await produce(GROWN, p, records(20, 100 + p));
    await targetView.admin.alterTopicConfigs([
      { topic: GROWN, set: configs({ "retention.bytes": "1073741824" }) },
    ]);
    await sourceView.admin.alterTopicConfigs([
      { topic: GROWN, set: configs({ "retention.ms": "86400000" }) },
    ]);
    // A topic whose records may be up to 3 MiB (the defaults cap our fetches and batches at 1 MiB).
    await sourceView.admin.createTopics([
      {
        name: BIG,
        partitions: 1,
        replicationFactor: 1,
        configs: configs({ "max.message.bytes": String(BIG_LIMIT) }),
      },
    ]);
    const big = await recordFilling(BIG_LIMIT);
    await writer.write({ topic: BIG, partition: 0 }, [big]);

    // Assess 2
    await waitFor(
      "the grown partitions copied",
      async () => {
        const counts = await Promise.all(Array.from({ length: 8 }, (_, p) => copied(GROWN, p)));
        return counts.every((n, p) => n === (p < 4 ? 70 : 20));
      },
      45_000,
    );
    assert.equal((await targetView.admin.listTopics()).find((t) => t.name === GROWN)?.partitions, 8);
    await waitFor("the large record copied", async () => (await copied(BIG, 0)) === 1, 45_000);
    const [copy] = await targetView.read({ topic: BIG, partition: 0 });
    assert.ok(copy?.value?.equals(big.value ?? Buffer.alloc(0)), "the large record, byte for byte");
    await waitFor(
      "the retention synced",
      async () =>
        (await targetView.admin.describeTopicConfigs([GROWN])).get(GROWN)?.get("retention.ms") === "86400000",
      30_000,
    );
    const grownConfigs = (await targetView.admin.describeTopicConfigs([GROWN, BIG])) ?? new Map();
    assert.equal(grownConfigs.get(GROWN)?.get("retention.bytes"), "1073741824", "target-only setting kept");
    assert.equal(
      grownConfigs.get(BIG)?.get("max.message.bytes"),
      String(BIG_LIMIT + MAX_MESSAGE_BYTES_HEADROOM),
    );

    // The run stops cleanly on Ctrl-C and reports no error.
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    child.kill("SIGINT");
    assert.equal(await exited, 130);
    assert.doesNotMatch(runOutput, /^error /m);
    assert.doesNotMatch(runOutput, /TARGET_PARTITIONS_TOO_FEW|RECORD_REJECTED/);
    run = undefined;
  });

  it("plan is clean after sync, and shows the next drift (grow, set) without changing anything", async () => {
    const clean = await plan();
    assert.equal(clean.code, 0);
    assert.equal(clean.json.inSync, true, JSON.stringify(clean.json));
    assert.deepEqual(clean.json.selected.find((s) => s.source === GROWN)?.targetOnly, ["retention.bytes"]);

    await sourceView.admin.createPartitions([{ topic: GROWN, count: 10 }]);
    await sourceView.admin.alterTopicConfigs([
      { topic: GROWN, set: configs({ "retention.ms": "172800000" }) },
    ]);
    // Both are answered once the controller made them; plan reads the broker, which shows them a
    // moment later (test/helpers/kafka-eventually.ts).
    await eventually(
      `${GROWN} grown past 8 partitions in the source's Metadata`,
      () => sourceView.admin.listTopics(),
      (topics) => (topics.find((t) => t.name === GROWN)?.partitions ?? 0) > 8,
    );
    await eventually(
      `${GROWN}'s new retention.ms described by the source`,
      () => sourceView.admin.describeTopicConfigs([GROWN]),
      (described) => described.get(GROWN)?.get("retention.ms") !== "86400000",
    );
    const drift = await plan();

    assert.equal(drift.code, 0);
    assert.equal(drift.json.inSync, false);
    const grown = drift.json.selected.find((s) => s.source === GROWN);
    assert.equal(grown?.action, "grow");
    assert.equal(grown?.targetPartitions, 8);
    assert.deepEqual(grown?.configChanges, [{ name: "retention.ms", from: "86400000", to: "172800000" }]);
    assert.equal((await targetView.admin.listTopics()).find((t) => t.name === GROWN)?.partitions, 8);
    const text = await runCliCaptured(["plan", "--config", config]);
    assert.match(text.stdout, new RegExp(`^${GROWN}\\s+${GROWN}\\s+10\\s+8\\s+grow\\s+1$`, "m"));
    assert.match(text.stdout, new RegExp(`${GROWN}: set retention.ms 86400000 -> 172800000`));
    assert.match(text.stdout, new RegExp(`${GROWN}: keep retention.bytes \\(target only\\)`));
  });
});
