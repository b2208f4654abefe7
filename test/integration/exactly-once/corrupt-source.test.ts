/**
 * target.copy "batches", where the worker's reader leaves the CRC of a batch passing as it came to
 * the target's broker (lib/kafka/codec/pass-through.ts): a source batch changed on its way to the
 * worker (a proxy in front of the source flips a byte of one of its records, once) stops its
 * partition with RECORD_REJECTED; after the backoff the worker reads it again, sound, and in the
 * end the target holds every source record once, as the source holds it: nothing of the changed
 * batch landed, no checkpoint moved past it. On the mock or real Kafka (KAFKA_TESTBED).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CorruptingProxy, startCorruptingProxy } from "../../helpers/corrupting-proxy.js";
import { useMirrorRig } from "./mirror-rig.js";

const TOPIC = "CRC";
const tp = { topic: TOPIC, partition: 0 };

describe("target.copy batches: a source batch changed on its way to the worker", () => {
  const rig = useMirrorRig(["src", "dst"], TOPIC);
  let proxy: CorruptingProxy;

  before(async () => {
    proxy = await startCorruptingProxy(rig.cluster("src").bootstrapServers[0] as string);
  });

  after(() => proxy.stop());

  it("stops the partition at it, then copies every record once as the source holds it", async () => {
    // Prepare: three source batches of 10 records (offsets 0, 10, 20); the middle one changed once.
    await rig.produce("src", TOPIC, 0, 30, 1, 10);
    proxy.corruptBatch(TOPIC, 10, 1);

    // Act: a run through the proxy, until caught up (but for the partition that stopped), and
    // the next run, as the next Lambda tick would be.
    const config = {
      topics: { whitelist: TOPIC },
      target: { copy: "batches", fencing: "transactional" },
    } as const;
    const first = await rig.replicate("src", "dst", config, proxy.bootstrapServers);
    const checkpoint = (await rig.lease("src", "dst", tp))?.checkpoint;
    const second = await rig.replicate("src", "dst", config, proxy.bootstrapServers);

    // Assess
    assert.equal(proxy.corrupted(), 1, "the proxy changed the batch at 10");
    const refusals = first.summary.errors.filter((e) => e.code === "RECORD_REJECTED");
    assert.equal(refusals.length, 1, JSON.stringify(first.summary.errors));
    assert.match(refusals[0]?.message ?? "", /offsets 10\.\.19 .*CORRUPT_MESSAGE/);
    assert.ok(
      typeof checkpoint === "number" && checkpoint <= 10,
      `checkpoint ${checkpoint} not past the changed batch`,
    );
    assert.deepEqual(second.summary.errors, []);
    const [source, target] = [await rig.read("src", tp), await rig.read("dst", tp)];
    assert.equal(source.length, 30);
    const shown = (rs: typeof source) => rs.map((r) => [r.key?.toString("hex"), r.value?.toString("hex")]);
    assert.deepEqual(shown(target), shown(source), "every record once, unchanged, in order");
  });
});
