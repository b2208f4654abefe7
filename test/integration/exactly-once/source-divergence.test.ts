/**
 * A source log that diverges under a checkpoint is never read on silently: a topic deleted and
 * created again (a new topic id, on the mock and on real Kafka) is copied again from its start,
 * all of it, and the offsets whose copies no longer match the source are counted in recordsLost.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DEFAULT_PROVENANCE_HEADER, lastProvenance } from "../../../lib/core/provenance.js";
import { KAFKA_TESTBED } from "../../helpers/kafka-testbed.js";
import type { RealKafka } from "../../helpers/real-kafka.js";
import { MirrorRig } from "./mirror-rig.js";

const HEADER = Buffer.from(DEFAULT_PROVENANCE_HEADER);
/** Re-created under a checkpoint. */
const TOPIC = "EVENTS";
const tp = { topic: TOPIC, partition: 0 };
/** Truncated under a checkpoint. */
const LEDGER = "LEDGER";
const ledger = { topic: LEDGER, partition: 0 };
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

/** Not mirrored: a partition on every broker, one replica each (real Kafka only). */
const BYSTANDER = "BYSTANDER";

// One rig for both scenarios, each with a topic (and so a lease table) of its own. On real Kafka
// the source has three brokers and LEDGER lives on two of them: the third keeps the controller
// quorum while both are down (the truncation below is a real unclean election). Whichever broker
// is down, a partition of BYSTANDER then has no leader, as when a broker holding unreplicated
// partitions dies in production: the mirror of LEDGER must not care.
const rig = new MirrorRig();
before(async () => {
  await rig.start(["src", "dst"], { src: KAFKA_TESTBED === "real" ? 3 : 1 });
  for (const alias of ["src", "dst"]) await rig.cluster(alias).createTopic(TOPIC, 1, 1);
  await rig.cluster("src").createTopic(LEDGER, 1, KAFKA_TESTBED === "real" ? 2 : 1);
  await rig.cluster("dst").createTopic(LEDGER, 1, 1);
  if (KAFKA_TESTBED === "real") await rig.cluster("src").createTopic(BYSTANDER, 3, 1);
});
after(() => rig.close());

describe("the source topic is re-created under a checkpoint", () => {
  it("copies every record of the new log, none skipped, and counts the loss", async () => {
    // Prepare: 50 records copied and checkpointed at 50
    const whitelist = { topics: { whitelist: TOPIC } };
    await rig.produce("src", TOPIC, 0, 50, 1);
    const first = await rig.replicate("src", "dst", whitelist);
    assert.deepEqual(first.metrics.lost, []);
    await rig.cluster("src").deleteTopic(TOPIC);
    await rig.cluster("src").createTopic(TOPIC, 1, 1);
    // More than the checkpoint: resuming at 50 would skip 0..49 of the new log without a word.
    await rig.produce("src", TOPIC, 0, 70, 2);

    // Act
    const { metrics, logger } = await rig.replicate("src", "dst", whitelist);

    // Assess
    assert.deepEqual(metrics.lost, [{ topic: TOPIC, partition: 0, from: 0, to: 50 }]);
    const logged = logger.at("error").filter((e) => /re-created/.test(e.message));
    assert.equal(logged.length, 1, JSON.stringify(logger.at("error")));
    const copied = await rig.read("dst", tp);
    assert.deepEqual(
      copied.map((r) => lastProvenance(r, HEADER)?.offset),
      [...range(0, 50), ...range(0, 70)],
    );
    const fresh = await rig.read("src", tp);
    assert.deepEqual(
      copied.slice(50).map((r) => r.value?.toString("hex")),
      fresh.map((r) => r.value?.toString("hex")),
    );
  });
});

describe("the source log is truncated under a checkpoint (unclean leader election)", () => {
  // The mock shortens the log with our launcher's `truncate-log` (a new leader epoch, as an
  // election gives); real Kafka elects the replica that missed the last records.

  it("resumes where the log diverged, copies the new records at reused offsets and counts the loss", {
    timeout: 180_000,
  }, async () => {
    // Prepare: two batches, 0..29 and 30..49, copied and checkpointed at 50 (on real Kafka the
    // second one lands on the leader alone, its follower down and out of the ISR)
    const whitelist = { topics: { whitelist: LEDGER } };
    const src = rig.cluster("src");
    await rig.produce("src", LEDGER, 0, 30, 1);
    const replicas = src.kind === "real" ? await leaveLeaderAlone(src.real) : undefined;
    await rig.produce("src", LEDGER, 0, 20, 2);
    const first = await rig.replicate("src", "dst", whitelist);
    // Regression (real Kafka): a BYSTANDER partition without a leader made every topic listing
    // fail (kafkajs's Metadata parser), and this run planned nothing for its whole budget.
    assert.deepEqual(first.summary.errors, []);
    assert.equal(first.summary.partitions[0]?.checkpoint, 50);
    // The new leader's log ends at 30, at a new leader epoch; 25 new records follow, so offsets
    // 30..49 now hold different records and resuming at 50 would skip them.
    if (src.kind === "real" && replicas !== undefined) await electShortReplica(src.real, replicas);
    if (src.kind === "mock") await src.mock.command(`truncate-log ${LEDGER} 0 30`);
    await rig.produce("src", LEDGER, 0, 25, 3);

    // Act
    const { metrics, logger } = await rig.replicate("src", "dst", whitelist);

    // Assess
    assert.deepEqual(metrics.lost, [{ topic: LEDGER, partition: 0, from: 30, to: 50 }]);
    assert.equal(logger.at("error").filter((e) => /truncated/.test(e.message)).length, 1);
    const copied = await rig.read("dst", ledger);
    assert.deepEqual(
      copied.map((r) => lastProvenance(r, HEADER)?.offset),
      [...range(0, 50), ...range(30, 25)],
    );
    const source = await rig.read("src", ledger);
    assert.deepEqual(
      copied.slice(50).map((r) => r.value?.toString("hex")),
      source.slice(30).map((r) => r.value?.toString("hex")),
    );
  });
});

interface Replicas {
  readonly leader: number;
  readonly follower: number;
}

/** Real Kafka: the follower killed and, once the controller fenced it, out of the ISR. */
async function leaveLeaderAlone(kafka: RealKafka): Promise<Replicas> {
  const { leader, replicas } = await kafka.partitionState(LEDGER, 0);
  const follower = replicas.find((r) => r !== leader);
  assert.ok(follower !== undefined && leader > 0, `replicas ${replicas}, leader ${leader}`);
  await kafka.killBroker(follower);
  await until(`${LEDGER}[0]'s ISR down to its leader`, async () => {
    const { isr } = await kafka.partitionState(LEDGER, 0);
    return isr.length === 1 && isr[0] === leader;
  });
  return { leader, follower };
}

/**
 * The leader dies too; the follower comes back with the log it had (30 records) and, the only
 * replica left, is elected uncleanly: what only the leader had, offsets 30..49, is gone.
 */
async function electShortReplica(kafka: RealKafka, { leader, follower }: Replicas): Promise<void> {
  await kafka.killBroker(leader);
  await kafka.restartBroker(follower);
  await kafka.uncleanElection(LEDGER, 0);
  assert.equal(await kafka.leaderOf(LEDGER, 0), follower);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
