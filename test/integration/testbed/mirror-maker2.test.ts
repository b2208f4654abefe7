// MirrorMaker 2 beside us (test/helpers/mirror-maker2.ts) really copies: records produced to a
// 1-broker source arrive byte for byte on a 1-broker target under the same topic name, read back
// with kcat (librdkafka, no code shared with the runner or MM2) at read_committed; records of an
// aborted source transaction are not copied (MM2's source consumer reads read_committed); the
// copy is written in transactions (exactly-once support on: commit markers on the target);
// records produced after the start follow; the JVM dies with the process that started it. How
// long MM2 takes to start and to begin copying is printed as test diagnostics.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { eventually } from "../../helpers/group-client.js";
import { type KcatRecord, kcatProduce, kcatRead } from "../../helpers/kcat.js";
import { type MirrorMaker2, startMirrorMaker2 } from "../../helpers/mirror-maker2.js";
import { mirrorMaker2Properties } from "../../helpers/mirror-maker2-config.js";
import { ClusterView } from "../../helpers/partition-data.js";
import { isRunning, rssMiB } from "../../helpers/processes.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";
import { ScriptedProducer } from "../../helpers/txn-script.js";

const STARTUP_MS = 240_000;
const COPY_MS = 120_000;

function someRecords(count: number, tag: string): KcatRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    key: Buffer.from(`${tag}-${i}`),
    value: randomBytes(300),
  }));
}

/** A partition as a read_committed kcat consumer sees it: keys and values, in order. */
async function committed(
  brokers: readonly string[],
  topic: string,
  partition: number,
): Promise<KcatRecord[]> {
  const read = await kcatRead({ brokers, topic, partition, config: { "isolation.level": "read_committed" } });
  return read.map(({ key, value }) => ({ key, value }));
}

describe("MirrorMaker 2 settings (mm2.properties)", () => {
  it("sizes every replication factor for the clusters and turns exactly-once on as documented", () => {
    const props = mirrorMaker2Properties({
      source: { bootstrapServers: ["s:1"], brokerIds: [1] },
      target: { bootstrapServers: ["t:1", "t:2", "t:3"], brokerIds: [1, 2, 3] },
      sourceAlias: "a",
      targetAlias: "b",
      topics: "orders|payments",
      tasks: 2,
      exactlyOnce: true,
      restPort: 8083,
      extra: { "a->b.producer.linger.ms": "5" },
    });
    const lines = new Set(props.trim().split("\n"));

    for (const expected of [
      "clusters = a, b",
      "a->b.enabled = true",
      "a->b.topics = orders|payments",
      "a->b.tasks.max = 2",
      "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
      "replication.factor = 3",
      "status.storage.replication.factor = 3",
      "offset-syncs.topic.replication.factor = 1",
      "b.exactly.once.source.support = enabled",
      "dedicated.mode.enable.internal.rest = true",
      "listeners = http://127.0.0.1:8083",
      "a.consumer.isolation.level = read_committed",
      "a->b.producer.linger.ms = 5",
    ]) {
      assert.ok(lines.has(expected), `mm2.properties has "${expected}":\n${props}`);
    }
  });
});

describe("MirrorMaker 2 beside us: 1-broker source to 1-broker target", () => {
  let source: RealKafka;
  let target: RealKafka;
  let mm2: MirrorMaker2 | undefined;
  const topic = `mm2-${randomUUID()}`;
  const before0 = { p0: someRecords(120, "p0"), p1: someRecords(80, "p1") };

  before(
    async () => {
      [source, target] = await Promise.all([startRealKafka(), startRealKafka()]);
      await source.createTopic(topic, 2);
      await kcatProduce({ brokers: source.bootstrapServers, topic, partition: 0, records: before0.p0 });
      await kcatProduce({ brokers: source.bootstrapServers, topic, partition: 1, records: before0.p1 });
      // A committed and an aborted transaction after them on partition 0 (librdkafka's producer).
      const txn = new ScriptedProducer(source.bootstrapServers, topic);
      try {
        await txn.init();
        await txn.transaction("kept", 5, "commit");
        await txn.transaction("aborted", 5, "abort");
      } finally {
        await txn.close();
      }
    },
    { timeout: STARTUP_MS },
  );

  after(async () => {
    await mm2?.stop();
    await Promise.all([source?.stop(), target?.stop()]);
  });

  it("copies what the source holds, byte for byte, and what is produced after its start", {
    timeout: STARTUP_MS + COPY_MS,
  }, async (t) => {
    // Act: start MM2 on a source that already holds records.
    const spawned = performance.now();
    mm2 = await startMirrorMaker2({ source, target, topics: topic });
    const firstCopyMs = await eventually(
      "the first copied record on the target",
      async () =>
        (await committed(target.bootstrapServers, topic, 1)).length > 0 ? performance.now() : undefined,
      COPY_MS,
    );
    const later = someRecords(40, "later");
    await kcatProduce({ brokers: source.bootstrapServers, topic, partition: 1, records: later });

    // Assess: each target partition equals the source's committed view, in order.
    for (const partition of [0, 1]) {
      const want = await committed(source.bootstrapServers, topic, partition);
      const got = await eventually(
        `partition ${partition} copied`,
        async () => {
          const copy = await committed(target.bootstrapServers, topic, partition);
          return copy.length >= want.length ? copy : undefined;
        },
        COPY_MS,
      );
      assert.equal(got.length, want.length, `partition ${partition}: record count`);
      got.forEach((record, i) => {
        assert.deepEqual(record, want[i], `partition ${partition}, record ${i}`);
      });
    }
    const p0 = await committed(target.bootstrapServers, topic, 0);
    assert.equal(
      p0.length,
      before0.p0.length + 5,
      "partition 0: kcat's records and the committed transaction",
    );
    assert.ok(
      p0.slice(before0.p0.length).every((r) => r.key?.toString().startsWith("kept-")),
      "the committed transaction's records follow kcat's",
    );
    t.diagnostic(
      `MM2 start (spawn to source task RUNNING): ${mm2.startMs} ms; first record copied ` +
        `${Math.round(firstCopyMs - spawned)} ms after spawn; JVM RSS ${rssMiB(mm2.pid)} MiB`,
    );
  });

  it("copies no record of an aborted source transaction, and writes its copy in transactions", async () => {
    const view = new ClusterView(target.bootstrapServers, "mm2-test", "read_uncommitted");
    try {
      const everything = await view.read({ topic, partition: 0 });
      const [offsets] = await view.admin.listOffsets(topic, [0]);

      assert.equal(
        everything.filter((r) => r.key?.toString().startsWith("aborted-")).length,
        0,
        "no aborted record on the target, even read_uncommitted",
      );
      // Exactly-once source support commits each batch of MM2's with a marker after it; a
      // non-transactional copy would end exactly at its record count.
      assert.ok(
        offsets !== undefined && offsets.logEndOffset > everything.length,
        "commit markers on the target",
      );
    } finally {
      await view.close();
    }
  });

  it("dies with the process that started it, however that one dies (SIGKILL)", {
    timeout: STARTUP_MS,
  }, async () => {
    const runner = pathToFileURL(new URL("../../helpers/mirror-maker2.ts", import.meta.url).pathname).href;
    // Aliases of its own and no topic to copy: a second node in this suite's group or flow would
    // rebalance or duplicate the copy under test.
    const options = {
      source: { bootstrapServers: source.bootstrapServers, brokerIds: [1] },
      target: { bootstrapServers: target.bootstrapServers, brokerIds: [1] },
      topics: "orphan-nothing",
      sourceAlias: "orphan-src",
      targetAlias: "orphan-tgt",
    };
    const script = `const { launchMirrorMaker2 } = await import(${JSON.stringify(runner)});
      const mm2 = await launchMirrorMaker2(${JSON.stringify(options)});
      console.log(JSON.stringify({ pid: mm2.pid, dir: mm2.dir }));
      setInterval(() => undefined, 60_000);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const lines = createInterface({ input: child.stdout });
    const first = await lines[Symbol.asyncIterator]().next();
    lines.close();
    const { pid, dir } = JSON.parse(String(first.value)) as { pid: number; dir: string };
    try {
      assert.ok(isRunning(pid), "MM2 running before the kill");

      child.kill("SIGKILL");
      await exited;

      await eventually("the orphaned MM2 to die", async () => (isRunning(pid) ? undefined : true), 10_000);
    } finally {
      if (isRunning(pid)) process.kill(pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops: no JVM left, its folder removed", async () => {
    assert.ok(mm2 !== undefined);
    const { pid, dir } = mm2;
    assert.ok(pid !== undefined && isRunning(pid), "MM2 runs before stop()");

    await mm2.stop();
    await mm2.stop(); // idempotent

    assert.equal(isRunning(pid), false, "no MM2 JVM left");
    assert.equal(existsSync(dir), false, "folder removed");
  });
});
