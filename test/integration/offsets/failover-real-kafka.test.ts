/**
 * The offset sync and `kafka-mirror failover` into a real Apache Kafka 4.1 target (one KRaft
 * node, test/helpers/real-kafka.ts) whose groups run either rebalance protocol: KIP-848 members
 * (`group.protocol=consumer`, Kafka 4's default for new consumers) and classic ones, both
 * librdkafka 2.15.1 consumers (test/helpers/group-member.ts). Kafka answers DescribeGroups for a
 * KIP-848 group as Dead with no members while consumers are in it, so the rule "never commit to a
 * group with live members" was blind there: a dry run promised a commit, and only the
 * coordinator's refusal kept the real one out. The source is a mock cluster (only its committed
 * offsets matter here); the replicator (`run --once`), translation, sync and CLI are ours.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, afterEach, before, describe, it } from "node:test";
import { openGroupContext } from "../../../lib/cli/commands/group-context.js";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { KafkaGroupAdmin } from "../../../lib/kafka/admin/group-admin.js";
import { createGroupSelector } from "../../../lib/offsets/group-selection.js";
import { type SyncReport, syncGroups } from "../../../lib/offsets/sync.js";
import { runCliCaptured as cli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { GroupMembers } from "../../helpers/group-member.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { type MockKafka, startMockKafka } from "../../helpers/mock-kafka.js";
import { type RealKafka, startRealKafka } from "../../helpers/real-kafka.js";

const STARTUP_MS = 180_000;
const PARTITIONS = 2;
const PER_PARTITION = 5;
/** What each group committed on the source: the next record it would read, per partition. */
const SOURCE_COMMITTED = [2, 3];

describe("offset sync and failover into real Kafka with KIP-848 and classic groups", {
  timeout: 600_000,
}, () => {
  let source: MockKafka;
  let target: RealKafka;
  let sourceGroups: KafkaGroupAdmin;
  let members: GroupMembers;
  let dir: string;
  const stateDirs: string[] = [];

  before(
    async () => {
      // One after the other: a cluster started beside one that failed to start would be left
      // unassigned, so never stopped, and keep the test process alive.
      source = await startMockKafka({ brokers: 1 });
      target = await startRealKafka({ brokers: 1 });
      sourceGroups = new KafkaGroupAdmin({ brokers: source.bootstrapServers });
      members = new GroupMembers(target.bootstrapServers);
      dir = await mkdtemp(join(tmpdir(), "kafka-mirror-failover-real-"));
    },
    { timeout: STARTUP_MS },
  );

  afterEach(async () => {
    await members.stopAll();
  });

  after(async () => {
    await Promise.allSettled(stateDirs.map((d) => stopLeaseServer(d)));
    await sourceGroups?.close();
    await Promise.allSettled([source?.stop(), target?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * A source topic of PER_PARTITION records valued `A-<partition>-<i>` per partition, copied to
   * the target by `run --once`; `groups` committed SOURCE_COMMITTED on the source.
   */
  async function mirrored(groups: readonly string[]) {
    const topic = `orders-${randomUUID().slice(0, 8)}`;
    await source.createTopic(topic, PARTITIONS);
    await target.createTopic(topic, PARTITIONS, 1);
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = Array.from({ length: PER_PARTITION }, (_, i) => ({
        key: null,
        value: Buffer.from(`A-${partition}-${i}`),
      }));
      await kcatProduce({ brokers: source.bootstrapServers, topic, partition, records });
    }
    for (const g of groups) {
      await sourceGroups.commitOffsets(
        g,
        SOURCE_COMMITTED.map((offset, partition) => ({ topic, partition, offset })),
      );
    }
    const stateDir = join(dir, topic);
    stateDirs.push(stateDir);
    const config = join(dir, `${topic}.yaml`);
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: target.bootstrapServers,
        whitelist: topic,
        sourceAlias: "idc1",
      }),
    );
    const common = ["--config", config, "--state-dir", stateDir];
    const run = await cli(["run", "--once", ...common]);
    assert.equal(run.code, 0, run.stderr);
    return { topic, config, stateDir, common };
  }

  /** A target topic nobody writes to: members subscribed to it stay in their group and commit nothing we look at. */
  async function idleTopic(): Promise<string> {
    const idle = `idle-${randomUUID().slice(0, 8)}`;
    await target.createTopic(idle, PARTITIONS, 1);
    return idle;
  }

  it("the sync commits into neither a KIP-848 nor a classic group while it has members on the target, dry run included, and commits once they left", async () => {
    // Prepare: both groups committed on the source; on the target, two KIP-848 members of one
    // and a classic member of the other
    const [kip848, classic] = [`kip848-${randomUUID().slice(0, 8)}`, `classic-${randomUUID().slice(0, 8)}`];
    const { topic, config, stateDir } = await mirrored([kip848, classic]);
    const idle = await idleTopic();
    const live = [
      members.start(kip848, "consumer", [idle]),
      members.start(kip848, "consumer", [idle]),
      members.start(classic, "classic", [idle]),
    ];
    await Promise.all(live.map((m) => m.assigned()));
    const io = { stdout: new PassThrough(), stderr: new PassThrough() };
    const context = await openGroupContext(
      {
        config,
        stateDir,
        json: false,
        debug: false,
        leaseStore: "embedded",
        signal: new AbortController().signal,
      },
      io,
    );
    try {
      const sync = (dryRun: boolean): Promise<SyncReport> =>
        syncGroups(
          {
            ...context.deps,
            leases: { list: async () => [...context.leases.values()] },
            selector: createGroupSelector({ whitelist: `${kip848}|${classic}` }),
            logger: context.clusters.logger,
          },
          { sourceAlias: context.sourceAlias, dryRun },
        );
      const onTarget = (groupId: string) => context.deps.targetGroups.fetchOffsets(groupId, [topic]);

      // Act: the lag function's sync, previewed and run, while the members are in
      const previewed = await sync(true);
      const refused = await sync(false);

      // Assess: both groups active with their real member counts (sorted: classic first), nothing committed
      for (const report of [previewed, refused]) {
        assert.deepEqual(
          report.groups.map((g) => [g.groupId, g.status, g.members]),
          [
            [classic, "active", 1],
            [kip848, "active", 2],
          ],
        );
        assert.equal(report.synced, 0);
      }
      for (const g of [kip848, classic]) {
        assert.deepEqual(
          (await onTarget(g)).map((o) => o.offset),
          [-1, -1],
        );
      }

      // Act: the members leave; the sync again
      await members.stopAll();
      const synced = await sync(false);

      // Assess: both committed, at the exact translations
      assert.deepEqual(
        synced.groups.map((g) => [g.groupId, g.status]),
        [
          [classic, "synced"],
          [kip848, "synced"],
        ],
      );
      for (const g of synced.groups) {
        assert.deepEqual(
          (await onTarget(g.groupId)).map((o) => o.offset),
          g.committed.map((r) => r.translation?.targetOffset),
        );
      }
    } finally {
      await context.close();
    }
  });

  it("failover refuses (exit 1) while a KIP-848 member is active on the target, --dry-run too; once it left, commits, and a KIP-848 consumer resumes at the first unconsumed record", async () => {
    // Prepare
    const group = `billing-${randomUUID().slice(0, 8)}`;
    const { topic, common } = await mirrored([group]);
    const live = members.start(group, "consumer", [await idleTopic()]);
    await live.assigned();

    // Act: while it is in
    const preview = await cli(["failover", ...common, "--group", group, "--dry-run"]);
    const refused = await cli(["failover", ...common, "--group", group]);
    const offsets = JSON.parse((await cli(["offsets", ...common, "--group", group, "--json"])).stdout);

    // Assess: refused both times, naming the member; `offsets` marks the group active there
    for (const r of [preview, refused]) {
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`refused: group "${group}" has 1 active member\\(s\\) on the target`),
      );
    }
    assert.deepEqual([offsets.groups[0].targetMembers, offsets.groups[0].activeOnTarget], [1, true]);

    // Act: it leaves; failover again; a KIP-848 consumer of the group reads the target
    await live.stop();
    const done = await cli(["failover", ...common, "--group", group]);
    const reader = members.start(group, "consumer", [topic]);
    const expected = SOURCE_COMMITTED.reduce((sum, from) => sum + PER_PARTITION - from, 0);
    await reader.waitFor(expected);
    await new Promise((r) => setTimeout(r, 1_000));

    // Assess: committed; the consumer reads exactly the copies of what the group had not consumed
    assert.equal(done.code, 0, done.stdout + done.stderr);
    assert.match(done.stdout, /committed 2 partition\(s\)/);
    const values = (p: number) => reader.records.filter((r) => r.partition === p).map((r) => r.value);
    assert.deepEqual(
      [0, 1].map(values),
      SOURCE_COMMITTED.map((from, p) =>
        Array.from({ length: PER_PARTITION - from }, (_, i) => `A-${p}-${from + i}`),
      ),
    );
  });
});
