/**
 * What rides with a checkpoint (target position, source topic id and leader epoch, the offset
 * map) and the checkpoint reset, which may move it backwards but only for the holder that decided
 * it on the stored checkpoint.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OFFSET_MAP_MAX_POINTS } from "../../../lib/core/lease/offset-map.js";
import { ChangeSet } from "../../../lib/core/lease/table.js";
import type { Lease } from "../../../lib/core/ports.js";
import { isReplicatorError } from "../../../lib/errors.js";
import {
  assertCode,
  type ConformanceBackend,
  claimed,
  ensureOne,
  type Fixture,
  fixture,
  MINUTE,
} from "./backend.js";

const source = { topicId: "0f3c5a9e2b7d4e61a8c9d0e1f2a3b4c5", leaderEpoch: 4 };

/** A fresh table with orders:0 held by w1 at checkpoint 500 (target position 900, `source`). */
async function heldAt500(backend: ConformanceBackend): Promise<Fixture & { held: Lease; now: number }> {
  const f = await fixture(backend);
  const now = Date.now();
  const lease = await claimed(f.store, await ensureOne(f.store), "w1", now + MINUTE);
  return { ...f, held: await f.store.checkpoint(lease, 500, now, 900, source), now };
}

export function checkpointCases(backend: ConformanceBackend): void {
  describe("checkpoint positions and resets", () => {
    it("stores the topic id and epoch with the checkpoint: an unknown id is kept, an unknown epoch is not", async () => {
      const { store, held, now } = await heldAt500(backend);
      assert.deepEqual([held.sourceTopicId, held.sourceEpoch], [source.topicId, 4]);

      const next = await store.checkpoint(held, 600, now, 950, { topicId: null, leaderEpoch: null });

      assert.equal(next.checkpoint, 600);
      assert.equal(next.sourceTopicId, source.topicId);
      // An epoch always goes with the checkpoint it was stored with (Lease.sourceEpoch).
      assert.equal(next.sourceEpoch, null);
    });

    it("an epoch counts only with the checkpoint it was stored with (an older version moved it)", async () => {
      // Checkpoint 500 with epoch 4; an older version moves the checkpoint to 800 and, not
      // knowing sourceEpoch, leaves it (and the checkpoint it was stored with) alone.
      const { store, raw } = await heldAt500(backend);
      const olderVersion = new ChangeSet().with("checkpoint", 800);
      assert.ok((await raw.update("orders:0", olderVersion, { operation: "test" })).ok);

      const [moved] = await store.list();

      // Epoch 4 describes the records from 500 on, not from 800: unknown.
      assert.deepEqual([moved?.checkpoint, moved?.sourceEpoch], [800, null]);
    });

    it("moves the checkpoint back with the new log's position, removing what is unknown", async () => {
      const { store, held, now } = await heldAt500(backend);
      const position = { targetOffset: null, source: { topicId: "aa".repeat(16), leaderEpoch: null } };

      const reset = await store.resetCheckpoint(held, 0, now, "topic-recreated", position);

      assert.deepEqual(
        [reset.checkpoint, reset.targetOffset, reset.sourceTopicId, reset.sourceEpoch],
        [0, null, "aa".repeat(16), null],
      );
      assert.deepEqual(await store.list(), [reset]);
      // A retry of the reset that landed succeeds and changes nothing.
      const again = await store.resetCheckpoint(held, 0, now, "topic-recreated", position);
      assert.equal(again.checkpoint, 0);
    });

    it("refuses a reset from a holder whose lease was taken over", async () => {
      const { store, held, now } = await heldAt500(backend);
      // w1 stalls past its expiry; w2 takes the lease, resets and copies on.
      const [seen] = await store.list();
      assert.ok(seen);
      const taken = await claimed(store, seen, "w2", now + 2 * MINUTE);
      const truncated = { targetOffset: 1200, source: { topicId: source.topicId, leaderEpoch: 4 } };
      const reset = await store.resetCheckpoint(taken, 300, now, "log-truncated", truncated);
      await store.checkpoint(reset, 450, now, 1300, { topicId: source.topicId, leaderEpoch: 5 });

      // w1's late reset must not rewind w2's progress.
      await assert.rejects(
        store.resetCheckpoint(held, 300, now, "log-truncated", truncated),
        assertCode("LEASE_LOST", "taken"),
      );
      const [stored] = await store.list();
      assert.deepEqual([stored?.checkpoint, stored?.sourceEpoch], [450, 5]);
    });

    it("refuses a reset decided on a checkpoint that is not the stored one any more", async () => {
      const { store, held, now } = await heldAt500(backend);
      assert.equal((await store.checkpoint(held, 700, now, 990, source)).checkpoint, 700);

      // `held` still says 500: a reset decided on it is stale.
      await assert.rejects(
        store.resetCheckpoint(held, 300, now, "log-truncated", { targetOffset: 1000, source }),
        assertCode("LEASE_LOST", "checkpoint-ahead"),
      );
      assert.equal((await store.list())[0]?.checkpoint, 700);
    });

    offsetMapCases(backend);
    producerIdCases(backend);
  });
}

function producerIdCases(backend: ConformanceBackend): void {
  it("stores the producer ids given with a checkpoint, keeps them through one without, int64 exact", async () => {
    const { store, held, now } = await heldAt500(backend);
    assert.equal(held.producerIds, undefined);
    const max = 0x7fff_ffff_ffff_ffffn; // beyond a safe N: stored as decimal strings
    let lease = await store.checkpoint(held, 500, now, 900, source, [7n, max]);
    lease = await store.checkpoint(lease, 600, now, 950, source);
    assert.deepEqual(lease.producerIds, [7n, max]);
    assert.deepEqual((await store.list())[0]?.producerIds, [7n, max]);
    await assert.rejects(store.checkpoint(lease, 600, now, 950, source, []), assertCode("CONFIG_INVALID"));
  });

  it("a lease item whose producer ids are not int64 decimals is unreadable, naming the attribute", async () => {
    const { store, raw } = await heldAt500(backend);
    for (const bad of ["-1", "0x10", "9223372036854775808", ""]) {
      const changes = new ChangeSet().with("producerIds", ["5", bad]);
      assert.ok((await raw.update("orders:0", changes, { operation: "test" })).ok);
      await assert.rejects(store.lease({ topic: "orders", partition: 0 }), (error: unknown) => {
        assert.ok(isReplicatorError(error, "LEASE_STORE_INVALID"), String(error));
        assert.deepEqual(error.details, { leaseKey: "orders:0", attribute: "producerIds" });
        return true;
      });
    }
  });
}

function offsetMapCases(backend: ConformanceBackend): void {
  async function claimedFresh() {
    const { store } = await fixture(backend);
    const now = Date.now();
    return { store, now, held: await claimed(store, await ensureOne(store), "w1", now + MINUTE) };
  }

  it("adds each checkpoint's pair to the offset map, the pin as the origin, and reads it back", async () => {
    const { store, held, now } = await claimedFresh();
    let lease = await store.checkpoint(held, 0, now, 7); // the pin: nothing copied yet
    lease = await store.checkpoint(lease, 100, now, 108);
    lease = await store.checkpoint(lease, 100, now, 110); // stays put, a later position
    lease = await store.checkpoint(lease, 250, now); // no position: the map is left alone
    assert.deepEqual(lease.offsetMap, [
      { source: 0, target: 7, origin: true },
      { source: 100, target: 110 },
    ]);
    assert.deepEqual((await store.list())[0]?.offsetMap, lease.offsetMap);
  });

  it("keeps at most 32 points over many checkpoints, the origin among them", async () => {
    const { store, held, now } = await claimedFresh();
    let lease = await store.checkpoint(held, 0, now, 0);
    for (let c = 1; c <= 80; c++) lease = await store.checkpoint(lease, c * 10, now, c * 12);
    assert.equal(lease.offsetMap?.length, OFFSET_MAP_MAX_POINTS);
    assert.deepEqual(lease.offsetMap?.[0], { source: 0, target: 0, origin: true });
    assert.deepEqual(lease.offsetMap?.at(-1), { source: 800, target: 960 });
  });

  it("a checkpoint reset starts the offset map again, or removes it without a position", async () => {
    const { store, held, now } = await claimedFresh();
    let lease = await store.checkpoint(held, 0, now, 0);
    lease = await store.checkpoint(lease, 500, now, 900);
    const src = { topicId: "bb".repeat(16), leaderEpoch: null };
    lease = await store.resetCheckpoint(lease, 40, now, "log-truncated", { targetOffset: 950, source: src });
    assert.deepEqual(lease.offsetMap, [{ source: 40, target: 950 }]);
    lease = await store.resetCheckpoint(lease, 0, now, "topic-recreated", {
      targetOffset: null,
      source: src,
    });
    assert.equal(lease.offsetMap, undefined);
  });
}
