/**
 * When the leader epoch a request carries is read again, and when the one kept is sent: kept
 * while kafkajs's metadata names the leader it was read with, read again on a leader change and
 * after `forget` (the cluster client's metadata refresh). The reads are a fake of the cluster
 * client's Metadata v10+ call; against a broker: test/integration/kafka/leader-epoch.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LeaderEpochs, NO_LEADER_EPOCH } from "../../../../lib/kafka/wire/leader-epochs.js";
import type { PartitionLeadership } from "../../../../lib/kafka/wire/metadata.js";

const P0 = { topic: "t", partition: 0 };
const P1 = { topic: "t", partition: 1 };

/** A topic's metadata as the test sets it, and the reads made of it (by the node asked). */
function fakeMetadata(initial: readonly PartitionLeadership[] | null) {
  const state = { now: initial, reads: [] as number[], fail: undefined as Error | undefined };
  const epochs = new LeaderEpochs(async (_topic, via) => {
    state.reads.push(via);
    if (state.fail !== undefined) throw state.fail;
    return state.now;
  });
  return { state, epochs };
}

describe("LeaderEpochs", () => {
  it("reads a topic once and sends each partition's epoch while the same leader leads it", async () => {
    const { state, epochs } = fakeMetadata([
      { partition: 0, leader: 1, leaderEpoch: 5 },
      { partition: 1, leader: 2, leaderEpoch: 9 },
    ]);

    const sent = [await epochs.epochFor(P0, 1), await epochs.epochFor(P1, 2), await epochs.epochFor(P0, 1)];

    assert.deepEqual(sent, [5, 9, 5]);
    assert.deepEqual(state.reads, [1], "one read, asked of the leader the first call routes to");
  });

  it("reads again when kafkajs's metadata names another leader, and sends the new leader's epoch", async () => {
    const { state, epochs } = fakeMetadata([{ partition: 0, leader: 1, leaderEpoch: 5 }]);
    await epochs.epochFor(P0, 1);
    state.now = [{ partition: 0, leader: 2, leaderEpoch: 6 }];

    const sent = await epochs.epochFor(P0, 2);

    assert.equal(sent, 6);
    assert.deepEqual(state.reads, [1, 2]);
  });

  it("after forget (a refresh after FENCED_LEADER_EPOCH), reads again though the leader is the same", async () => {
    // The leader moved away and back between two fetches: same node, newer epoch.
    const { state, epochs } = fakeMetadata([{ partition: 0, leader: 1, leaderEpoch: 5 }]);
    await epochs.epochFor(P0, 1);
    state.now = [{ partition: 0, leader: 1, leaderEpoch: 7 }];

    const before = await epochs.epochFor(P0, 1);
    epochs.forget();
    const after = await epochs.epochFor(P0, 1);

    assert.deepEqual([before, after], [5, 7]);
  });

  it("sends what a fresh read says even when it names another leader than kafkajs does", async () => {
    // One of the two views is stale; the broker refuses a mismatch, where -1 would let it answer.
    const { epochs } = fakeMetadata([{ partition: 0, leader: 3, leaderEpoch: 8 }]);

    assert.equal(await epochs.epochFor(P0, 1), 8);
  });

  it("shares one read among concurrent callers of a topic", async () => {
    const { state, epochs } = fakeMetadata([
      { partition: 0, leader: 1, leaderEpoch: 5 },
      { partition: 1, leader: 2, leaderEpoch: 9 },
    ]);

    const sent = await Promise.all([epochs.epochFor(P0, 1), epochs.epochFor(P1, 2)]);

    assert.deepEqual(sent, [5, 9]);
    assert.equal(state.reads.length, 1);
  });

  it("uses but does not keep a read that began before forget", async () => {
    const { state, epochs } = fakeMetadata([{ partition: 0, leader: 1, leaderEpoch: 5 }]);
    const early = epochs.epochFor(P0, 1);
    epochs.forget();
    state.now = [{ partition: 0, leader: 1, leaderEpoch: 6 }];

    const sent = [await early, await epochs.epochFor(P0, 1)];

    assert.deepEqual(sent, [5, 6]);
    assert.equal(state.reads.length, 2);
  });

  it("sends -1 when the broker cannot tell (no Metadata v10, or an epoch of -1), asking again only after forget", async () => {
    const none = fakeMetadata(null);
    const unknown = fakeMetadata([{ partition: 0, leader: 1, leaderEpoch: -1 }]);

    const sent = [await none.epochs.epochFor(P0, 1), await none.epochs.epochFor(P0, 1)];
    none.epochs.forget();
    await none.epochs.epochFor(P0, 1);

    assert.deepEqual(sent, [NO_LEADER_EPOCH, NO_LEADER_EPOCH]);
    assert.equal(none.state.reads.length, 2);
    assert.equal(await unknown.epochs.epochFor(P0, 1), NO_LEADER_EPOCH);
    assert.equal(await unknown.epochs.epochFor(P1, 1), NO_LEADER_EPOCH, "a partition the answer lacks");
  });

  it("fails the call whose read failed, and reads again on the next", async () => {
    const { state, epochs } = fakeMetadata([{ partition: 0, leader: 1, leaderEpoch: 5 }]);
    state.fail = new Error("connection closed");

    await assert.rejects(epochs.epochFor(P0, 1), /connection closed/);
    state.fail = undefined;

    assert.equal(await epochs.epochFor(P0, 1), 5);
    assert.equal(state.reads.length, 2);
  });

  it("keeps what a describe learnt, so the next route needs no read", async () => {
    const { state, epochs } = fakeMetadata(null);

    epochs.learn("t", [{ partition: 0, leader: 1, leaderEpoch: 4 }]);

    assert.equal(await epochs.epochFor(P0, 1), 4);
    assert.deepEqual(state.reads, []);
  });
});
