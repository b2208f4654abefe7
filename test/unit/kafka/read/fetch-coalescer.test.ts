import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildRequest,
  FetchCoalescer,
  type FetchSender,
  MAX_REQUEST_BYTES,
} from "../../../../lib/kafka/read/fetch-coalescer.js";
import type { KafkaClusterClient } from "../../../../lib/kafka/wire/cluster-client.js";
import { KafkaErrorCode, KafkaPartitionError } from "../../../../lib/kafka/wire/error-codes.js";
import {
  type FetchPartitionResponse,
  type FetchRequest,
  type FetchResponse,
  IsolationLevel,
} from "../../../../lib/kafka/wire/fetch.js";

const LIMITS = { maxRecords: 10, maxBytes: 1000, maxWaitMs: 500 };
const unusedCluster = {} as KafkaClusterClient;
/** A route to broker `leader`, as of `leaderEpoch` (-1: no epoch known). */
const on = (leader: number, leaderEpoch = -1) => ({ leader, leaderEpoch });

function answer(partition: number, errorCode = 0): FetchPartitionResponse {
  return {
    partition,
    errorCode,
    highWatermark: partition,
    lastStableOffset: partition,
    logStartOffset: 0,
    abortedTransactions: [],
    records: Buffer.alloc(0),
  };
}

/** A sender that records requests and answers every partition it was asked for. */
function recordingSender(hold?: Promise<void>) {
  const requests: { brokerId: number; request: FetchRequest }[] = [];
  const send: FetchSender = async (brokerId, request) => {
    requests.push({ brokerId, request });
    await hold;
    const response: FetchResponse = {
      throttleTimeMs: 0,
      errorCode: 0,
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => answer(p.partition)),
      })),
    };
    return response;
  };
  return { requests, send };
}

describe("FetchCoalescer", () => {
  it("asks at most MAX_REQUEST_BYTES in one request, or one partition's limit when larger", () => {
    const MIB = 1024 * 1024;
    const round = (count: number, maxBytes: number) =>
      Array.from({ length: count }, (_, partition) => ({
        tp: { topic: "a", partition },
        leaderEpoch: -1,
        offset: 0,
        limits: { ...LIMITS, maxBytes },
        resolve: () => undefined,
        reject: () => undefined,
      }));
    assert.equal(buildRequest(round(3, MIB)).maxBytes, 3 * MIB, "the sum of a few partitions' limits");
    assert.equal(buildRequest(round(500, MIB)).maxBytes, MAX_REQUEST_BYTES, "500 partitions of 1 MiB");
    const large = [...round(2, MIB), ...round(1, 100 * MIB)];
    assert.equal(buildRequest(large).maxBytes, 100 * MIB, "room for the largest partition's limit");
    // A partition's own limit is its own: only the request's total is bounded.
    assert.deepEqual(
      buildRequest(round(500, MIB))
        .topics[0]?.partitions.map((p) => p.maxBytes)
        .slice(0, 2),
      [MIB, MIB],
    );
  });

  it("sends calls made together for one broker as one request, per-partition limits and leader epochs kept", async () => {
    const { requests, send } = recordingSender();
    const coalescer = new FetchCoalescer(unusedCluster, 1000, send);

    const results = await Promise.all([
      coalescer.fetch(on(1, 4), { topic: "a", partition: 0 }, 5, LIMITS),
      coalescer.fetch(on(1, 6), { topic: "a", partition: 1 }, 7, { ...LIMITS, maxBytes: 300, maxWaitMs: 0 }),
      coalescer.fetch(on(1), { topic: "b", partition: 0 }, 9, LIMITS),
      coalescer.fetch(on(2, 3), { topic: "a", partition: 2 }, 1, LIMITS),
    ]);

    assert.deepEqual(
      results.map((r) => r.partition),
      [0, 1, 0, 2],
    );
    assert.equal(requests.length, 2);
    const toBroker1 = requests.find((r) => r.brokerId === 1)?.request;
    assert.deepEqual(toBroker1?.topics, [
      {
        topic: "a",
        partitions: [
          { partition: 0, currentLeaderEpoch: 4, fetchOffset: 5, maxBytes: 1000 },
          { partition: 1, currentLeaderEpoch: 6, fetchOffset: 7, maxBytes: 300 },
        ],
      },
      { topic: "b", partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 9, maxBytes: 1000 }] },
    ]);
    assert.deepEqual(requests.find((r) => r.brokerId === 2)?.request.topics[0]?.partitions, [
      { partition: 2, currentLeaderEpoch: 3, fetchOffset: 1, maxBytes: 1000 },
    ]);
    assert.equal(toBroker1?.maxWaitMs, 0);
    assert.equal(toBroker1?.maxBytes, 2300);
    assert.equal(toBroker1?.isolationLevel, 1);
  });

  it("asks for read_uncommitted when built for it (the chaos run's target check can read that way)", async () => {
    const { requests, send } = recordingSender();
    const coalescer = new FetchCoalescer(unusedCluster, 1000, send, IsolationLevel.READ_UNCOMMITTED);

    await coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS);

    assert.equal(requests[0]?.request.isolationLevel, IsolationLevel.READ_UNCOMMITTED);
  });

  it("sends further requests while others are in flight, up to three, and queues later calls", async () => {
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { requests, send } = recordingSender(hold);
    const coalescer = new FetchCoalescer(unusedCluster, 1000, send);
    const turn = () => new Promise((resolve) => setImmediate(resolve));

    const calls = [coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS)];
    await turn();
    calls.push(
      coalescer.fetch(on(1), { topic: "a", partition: 1 }, 0, LIMITS),
      coalescer.fetch(on(1), { topic: "a", partition: 2 }, 0, LIMITS),
    );
    await turn();
    calls.push(coalescer.fetch(on(1), { topic: "a", partition: 3 }, 0, LIMITS));
    await turn();
    calls.push(
      coalescer.fetch(on(1), { topic: "a", partition: 4 }, 0, LIMITS),
      coalescer.fetch(on(1), { topic: "a", partition: 5 }, 0, LIMITS),
    );
    await turn();
    assert.equal(requests.length, 3, "three requests in flight, the fourth waits");
    release();
    await Promise.all(calls);

    assert.deepEqual(
      requests.map((r) => r.request.topics[0]?.partitions.map((p) => p.partition)),
      [[0], [1, 2], [3], [4, 5]],
    );
  });

  it("never names one partition twice in a request", async () => {
    const { requests, send } = recordingSender();
    const coalescer = new FetchCoalescer(unusedCluster, 1000, send);

    await Promise.all([
      coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS),
      coalescer.fetch(on(1), { topic: "a", partition: 0 }, 10, LIMITS),
    ]);

    assert.deepEqual(
      requests.map((r) => r.request.topics[0]?.partitions[0]?.fetchOffset),
      [0, 10],
    );
  });

  it("fails only the partition the broker refused: a leader epoch answer is one partition's", async () => {
    const fenced = new FetchCoalescer(unusedCluster, 1000, async (_brokerId, request) => ({
      throttleTimeMs: 0,
      errorCode: 0,
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) =>
          answer(p.partition, p.currentLeaderEpoch === 4 ? KafkaErrorCode.FENCED_LEADER_EPOCH : 0),
        ),
      })),
    }));

    const [stale, current] = await Promise.allSettled([
      fenced.fetch(on(1, 4), { topic: "a", partition: 0 }, 0, LIMITS),
      fenced.fetch(on(1, 5), { topic: "a", partition: 1 }, 0, LIMITS),
    ]);

    assert.equal(stale.status === "fulfilled" && stale.value.errorCode, KafkaErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(current.status === "fulfilled" && current.value.errorCode, 0);
  });

  it("fails every caller of a request that failed, and fails a partition missing from the answer", async () => {
    const failing = new FetchCoalescer(unusedCluster, 1000, async () => {
      throw new Error("connection closed");
    });
    const silent = new FetchCoalescer(unusedCluster, 1000, async () => ({
      throttleTimeMs: 0,
      errorCode: 0,
      topics: [],
    }));

    const failed = await Promise.allSettled([
      failing.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS),
      failing.fetch(on(1), { topic: "a", partition: 1 }, 0, LIMITS),
    ]);

    assert.deepEqual(
      failed.map((r) => r.status),
      ["rejected", "rejected"],
    );
    await assert.rejects(silent.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS), KafkaPartitionError);
  });
});
