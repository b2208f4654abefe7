/**
 * Consumer failover end to end, with real librdkafka consumer groups (`kcat -G`, several
 * partitions) on two (or three) mock clusters and the real replicator (`kafka-mirror run
 * --once`): a group reads part of the source and commits; `kafka-mirror failover` translates
 * and commits its offsets on the target; the same group id reading the target starts exactly at
 * the copy of the first record it had not consumed, none skipped, none repeated. Also with the
 * target partitions interleaving a second source, with transaction markers and aborted records
 * in the source (these two in both target.copy modes), and with the group ahead of the mirror. Which side is ours: the consumers, the
 * group coordinator (the mock's, patched to empty groups at once) and the transactional source
 * producer are librdkafka's; the replicator, translation and commit are ours.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { stopLeaseServer } from "../../../lib/dynamodb/embedded/ensure.js";
import { runCliCaptured as cli } from "../../helpers/cli.js";
import { cliConfigYaml } from "../../helpers/cli-config.js";
import { stableOffsetReaches } from "../../helpers/kafka-eventually.js";
import { startTestKafka, type TestKafka } from "../../helpers/kafka-testbed.js";
import { kcatProduce } from "../../helpers/kcat.js";
import { type Consumed, startKcatGroupMember } from "../../helpers/kcat-group.js";
import { ScriptedProducer } from "../../helpers/txn-script.js";

const PARTITIONS = 3;
/** After a group has all it should, how long to watch for records it should not get. */
const QUIET_MS = 2_500;

/** target.copy and target.compression as the mirror's config sets them (left out: the defaults). */
interface CopySettings {
  readonly copy?: "batches";
  readonly compression?: "zstd";
}

describe("kafka-mirror failover with real consumer groups", () => {
  let a: TestKafka;
  let b: TestKafka;
  let central: TestKafka;
  let dir: string;
  const stateDirs: string[] = [];

  before(async () => {
    [a, b, central] = await Promise.all([
      startTestKafka({ brokers: 1 }),
      startTestKafka({ brokers: 1 }),
      startTestKafka({ brokers: 1 }),
    ]);
    dir = await mkdtemp(join(tmpdir(), "kafka-mirror-failover-"));
  });

  after(async () => {
    await Promise.allSettled(stateDirs.map((d) => stopLeaseServer(d)));
    await Promise.allSettled([a?.stop(), b?.stop(), central?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A mirror from `source` (alias) into `central`, with its own lease store. */
  async function mirrorOf(source: TestKafka, alias: string, topics: string, mode: CopySettings = {}) {
    const { copy, compression } = mode;
    const name = `${alias}-${randomUUID().slice(0, 8)}`;
    const stateDir = join(dir, name);
    stateDirs.push(stateDir);
    const config = join(dir, `${name}.yaml`);
    await writeFile(
      config,
      cliConfigYaml({
        source: source.bootstrapServers,
        target: central.bootstrapServers,
        whitelist: topics,
        sourceAlias: alias,
        ...(copy === undefined ? {} : { copy }),
        ...(compression === undefined ? {} : { compression }),
      }),
    );
    const common = ["--config", config, "--state-dir", stateDir];
    return {
      async run(): Promise<void> {
        const r = await cli(["run", "--once", ...common]);
        assert.equal(r.code, 0, r.stderr);
      },
      failover: (group: string, ...extra: string[]) =>
        cli(["failover", ...common, "--group", group, ...extra]),
      offsets: (group: string) => cli(["offsets", ...common, "--group", group, "--json"]),
    };
  }

  async function produce(cluster: TestKafka, topic: string, label: string, from: number, count: number) {
    for (let p = 0; p < PARTITIONS; p++) {
      const records = Array.from({ length: count }, (_, i) => ({
        key: null,
        value: Buffer.from(`${label}-${p}-${from + i}`),
      }));
      await kcatProduce({ brokers: cluster.bootstrapServers, topic, partition: p, records });
    }
  }

  /** A group member that reads `count` records, watches a while for more, and leaves (committing). */
  async function consume(
    cluster: TestKafka,
    groupId: string,
    topic: string,
    count: number,
  ): Promise<Consumed[]> {
    const member = startKcatGroupMember({ brokers: cluster.bootstrapServers, groupId, topics: [topic] });
    try {
      await member.waitFor(count, 60_000);
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    } finally {
      await member.stop();
    }
    return [...member.consumed];
  }

  /** The values of `label`'s records a group got, per partition in arrival order. */
  function values(consumed: readonly Consumed[], label: string): string[][] {
    return Array.from({ length: PARTITIONS }, (_, p) =>
      consumed.filter((c) => c.partition === p && c.value.startsWith(`${label}-`)).map((c) => c.value),
    );
  }

  function expected(label: string, from: number, to: number): string[][] {
    return Array.from({ length: PARTITIONS }, (_, p) =>
      Array.from({ length: to - from }, (_, i) => `${label}-${p}-${from + i}`),
    );
  }

  // "batches" with a target.compression: the translation matches recompressed copies to their
  // sources (kcat's batches are uncompressed) by the CRC of their records uncompressed.
  const modes: readonly CopySettings[] = [{}, { copy: "batches" }, { copy: "batches", compression: "zstd" }];
  for (const mode of modes) {
    const { copy } = mode;
    const named = `target.copy ${copy ?? "records"}${mode.compression === undefined ? "" : `, target.compression ${mode.compression}`}`;
    it(`the group resumes on the target at the copy of its first unconsumed record, between another source's records (${named})`, async () => {
      const topic = `orders-${randomUUID().slice(0, 8)}`;
      await Promise.all([a, b, central].map((c) => c.createTopic(topic, PARTITIONS)));
      const fromA = await mirrorOf(a, "idc1", topic, mode);
      const fromB = await mirrorOf(b, "idc2", topic, mode);
      const group = `billing-${randomUUID().slice(0, 8)}`;

      await produce(a, topic, "A", 0, 10);
      await produce(b, topic, "B", 0, 4);
      // Prepare: the group reads A's first 10 of each partition and commits.
      assert.deepEqual(values(await consume(a, group, topic, 3 * 10), "A"), expected("A", 0, 10));
      // The central topic interleaves: A 0..9, B 0..3, A 10..19, B 4..7.
      await fromA.run();
      await fromB.run();
      await produce(a, topic, "A", 10, 10);
      await fromA.run();
      await produce(b, topic, "B", 4, 4);
      await fromB.run();

      const out = await fromA.failover(group);
      assert.equal(out.code, 0, out.stdout + out.stderr);
      assert.match(out.stdout, /RPO: 0 record\(s\)/);
      assert.match(out.stdout, /source offset 10/);

      // Assess: on the target the group reads A 10..19 (and B's records after them), nothing else of A.
      const got = await consume(central, group, topic, 3 * (10 + 4));
      assert.deepEqual(values(got, "A"), expected("A", 10, 20));
      assert.deepEqual(values(got, "B"), expected("B", 4, 8));
    });

    if (mode.compression !== undefined) continue;
    it(`steps over the source's transaction markers and aborted records (${named})`, async () => {
      const topic = `ledger-${randomUUID().slice(0, 8)}`;
      await Promise.all([a, central].map((c) => c.createTopic(topic, 1)));
      const mirror = await mirrorOf(a, "idc1", topic, mode);
      const group = `ledger-${randomUUID().slice(0, 8)}`;
      const producer = new ScriptedProducer(a.bootstrapServers, topic);
      try {
        await producer.init();
        await producer.transaction("c1", 5, "commit");
        await producer.transaction("x1", 5, "abort");
        await producer.transaction("c2", 5, "commit");
        // The group (read_committed, librdkafka's default) reads the 10 committed records.
        const first = await consume(a, group, topic, 10);
        assert.deepEqual(
          first.map((c) => c.value),
          [0, 1, 2, 3, 4].map((i) => `c1-${i}`).concat([0, 1, 2, 3, 4].map((i) => `c2-${i}`)),
        );
        await producer.transaction("x2", 3, "abort");
        await producer.transaction("c3", 5, "commit");
      } finally {
        await producer.close();
      }
      // c3's COMMIT marker (offset 27) is written after the commit returned; until then the mirror
      // would read the source only to c3's first record and stop there, caught up.
      await stableOffsetReaches(a.bootstrapServers, { topic, partition: 0 }, 28);
      await mirror.run();

      const out = await mirror.failover(group);
      assert.equal(out.code, 0, out.stdout + out.stderr);

      const got = await consume(central, group, topic, 5);
      assert.deepEqual(
        got.map((c) => c.value),
        [0, 1, 2, 3, 4].map((i) => `c3-${i}`),
      );
    });
  }

  it("a group ahead of the mirror resumes right after the last copy, and exactly once the mirror caught up", async () => {
    const topic = `clicks-${randomUUID().slice(0, 8)}`;
    await Promise.all([a, central].map((c) => c.createTopic(topic, PARTITIONS)));
    const mirror = await mirrorOf(a, "idc1", topic);
    const group = `clicks-${randomUUID().slice(0, 8)}`;
    await produce(a, topic, "A", 0, 6);
    await mirror.run(); // copies 0..5
    await produce(a, topic, "A", 6, 6);
    await consume(a, group, topic, 3 * 12); // the group is at 12, the mirror at 6

    const early = await mirror.failover(group);
    assert.equal(early.code, 0, early.stdout + early.stderr);
    assert.match(early.stdout, /6 ahead of the mirror/);
    assert.match(early.stdout, /RPO: 18 record\(s\)/);

    // The mirror catches up; a sync (here: failover again) moves the group past the new copies.
    await mirror.run();
    const late = await mirror.failover(group);
    assert.equal(late.code, 0, late.stdout + late.stderr);
    await produce(a, topic, "A", 12, 3);
    await mirror.run();

    const got = await consume(central, group, topic, 3 * 3);
    assert.deepEqual(values(got, "A"), expected("A", 12, 15));
  });

  it("refuses while the group has members on the target, and never moves its offsets backwards", async () => {
    const topic = `audit-${randomUUID().slice(0, 8)}`;
    await Promise.all([a, central].map((c) => c.createTopic(topic, PARTITIONS)));
    const mirror = await mirrorOf(a, "idc1", topic);
    const group = `audit-${randomUUID().slice(0, 8)}`;
    await produce(a, topic, "A", 0, 4);
    await consume(a, group, topic, 3 * 4); // a first member reads some, commits...
    await produce(a, topic, "A", 4, 4);
    await mirror.run();

    // A member of the same group is live on the target: it reads everything there.
    const live = startKcatGroupMember({ brokers: central.bootstrapServers, groupId: group, topics: [topic] });
    try {
      await live.waitFor(3 * 8, 60_000);
      const refused = await mirror.failover(group);
      assert.equal(refused.code, 1, refused.stdout + refused.stderr);
      assert.match(refused.stdout, /refused: group .* active member/);
      assert.match(refused.stdout, /RPO: 0 record\(s\)/);
    } finally {
      await live.stop(); // it commits the end of every partition as it leaves
    }
    const before = JSON.parse((await mirror.offsets(group)).stdout);
    const targetCommitted = before.groups[0].partitions.map(
      (r: { targetCommitted: number }) => r.targetCommitted,
    );

    // The translation (offset 8 of 24-ish) is behind what the group committed on the target: kept.
    const kept = await mirror.failover(group);
    assert.equal(kept.code, 0, kept.stdout + kept.stderr);
    assert.match(kept.stdout, /already at \(or past\) the translation/);
    const after_ = JSON.parse((await mirror.offsets(group)).stdout);
    assert.deepEqual(
      after_.groups[0].partitions.map((r: { targetCommitted: number }) => r.targetCommitted),
      targetCommitted,
    );

    // --force moves it back to the translation: the group reads the target from its source position.
    const forced = await mirror.failover(group, "--force");
    assert.equal(forced.code, 0, forced.stdout + forced.stderr);
    const got = await consume(central, group, topic, 3 * 4);
    assert.deepEqual(values(got, "A"), expected("A", 4, 8));
  });
});
