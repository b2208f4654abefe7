import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  buildRequest,
  FetchCoalescer,
  type FetchSender,
  MAX_REQUEST_BYTES,
} from "../../../../lib/kafka/read/fetch-coalescer.js";
import { KafkaErrorCode, KafkaPartitionError } from "../../../../lib/kafka/wire/error-codes.js";
import {
  type FetchPartitionResponse,
  type FetchRequest,
  type FetchResponse,
  IsolationLevel,
} from "../../../../lib/kafka/wire/fetch.js";

const LIMITS = { maxRecords: 10, maxBytes: 1000, maxWaitMs: 500 };
/** One sender for both lanes, for tests of what does not depend on the split. */
const both = (send: FetchSender) => ({ data: send, poll: send });
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

/** A promise and what settles it (Promise.withResolvers, which Node 20 has not). */
function latch(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * One broker as the coalescer meets it: each connection's requests are answered in order, and a
 * request whose partitions are all caught up (at or past their log end) is held while it allows a
 * wait, until a record is appended to one of them or the test lets it expire.
 */
class InOrderBroker {
  readonly ends = new Map<number, number>();
  readonly sent: { connection: string; request: FetchRequest }[] = [];
  #wake = latch();
  #expire = latch();
  readonly #last = new Map<string, Promise<unknown>>();

  constructor(ends: Record<number, number>) {
    for (const [partition, end] of Object.entries(ends)) this.ends.set(Number(partition), end);
  }

  connection(name: string): FetchSender {
    return (_brokerId, request) => {
      this.sent.push({ connection: name, request });
      const answered = (this.#last.get(name) ?? Promise.resolve()).then(() => this.#answer(request));
      this.#last.set(name, answered);
      return answered;
    };
  }

  append(partition: number): void {
    this.ends.set(partition, (this.ends.get(partition) ?? 0) + 1);
    this.#wake.resolve();
    this.#wake = latch();
  }

  /** Held requests return as their maxWaitMs had passed. */
  expire(): void {
    this.#expire.resolve();
  }

  async #answer(request: FetchRequest): Promise<FetchResponse> {
    const asked = request.topics.flatMap((t) => t.partitions);
    const hasData = () => asked.some((p) => p.fetchOffset < (this.ends.get(p.partition) ?? 0));
    let expired = false;
    void this.#expire.promise.then(() => {
      expired = true;
    });
    while (request.maxWaitMs > 0 && !hasData() && !expired) {
      await Promise.race([this.#wake.promise, this.#expire.promise]);
    }
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      topics: request.topics.map((t) => ({
        topic: t.topic,
        partitions: t.partitions.map((p) => {
          const end = this.ends.get(p.partition) ?? 0;
          return { ...answer(p.partition), highWatermark: end, lastStableOffset: end };
        }),
      })),
    };
  }
}

/** Whether `promise` has settled by the time the macrotasks queued so far ran. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
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
        maxWaitMs: LIMITS.maxWaitMs,
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
    const coalescer = new FetchCoalescer(both(send));

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
    const coalescer = new FetchCoalescer(both(send), IsolationLevel.READ_UNCOMMITTED);

    await coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS);

    assert.equal(requests[0]?.request.isolationLevel, IsolationLevel.READ_UNCOMMITTED);
  });

  it("sends further requests while others are in flight, up to three, and queues later calls", async () => {
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { requests, send } = recordingSender(hold);
    const coalescer = new FetchCoalescer(both(send));
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
    const coalescer = new FetchCoalescer(both(send));

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
    const fenced = new FetchCoalescer(
      both(async (_brokerId, request) => ({
        throttleTimeMs: 0,
        errorCode: 0,
        topics: request.topics.map((t) => ({
          topic: t.topic,
          partitions: t.partitions.map((p) =>
            answer(p.partition, p.currentLeaderEpoch === 4 ? KafkaErrorCode.FENCED_LEADER_EPOCH : 0),
          ),
        })),
      })),
    );

    const [stale, current] = await Promise.allSettled([
      fenced.fetch(on(1, 4), { topic: "a", partition: 0 }, 0, LIMITS),
      fenced.fetch(on(1, 5), { topic: "a", partition: 1 }, 0, LIMITS),
    ]);

    assert.equal(stale.status === "fulfilled" && stale.value.errorCode, KafkaErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(current.status === "fulfilled" && current.value.errorCode, 0);
  });

  it("fails every caller of a request that failed, and fails a partition missing from the answer", async () => {
    const failing = new FetchCoalescer(
      both(async () => {
        throw new Error("connection closed");
      }),
    );
    const silent = new FetchCoalescer(both(async () => ({ throttleTimeMs: 0, errorCode: 0, topics: [] })));

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
  it("long-polls a caught-up partition over its own connection: a partition with records is read meanwhile", async () => {
    const broker = new InOrderBroker({ 0: 0, 1: 100 });
    const coalescer = new FetchCoalescer({
      data: broker.connection("data"),
      poll: broker.connection("poll"),
    });
    const idle = { topic: "a", partition: 0 };
    const busy = { topic: "a", partition: 1 };
    // Its first answer says where the idle partition ends; until then no fetch waits at the broker.
    assert.equal((await coalescer.fetch(on(1), idle, 0, LIMITS)).highWatermark, 0);

    const poll = coalescer.fetch(on(1), idle, 0, LIMITS);
    assert.equal(await settledYet(poll), false, "held at the broker");
    assert.equal((await coalescer.fetch(on(1), busy, 0, LIMITS)).highWatermark, 100);
    assert.equal(await settledYet(poll), false, "the read of the busy partition did not wait for it");
    // Below its known end it keeps the caller's wait (a broker reading tiered storage needs it).
    assert.equal((await coalescer.fetch(on(1), busy, 50, LIMITS)).highWatermark, 100);
    assert.equal(await settledYet(poll), false);
    broker.append(0);
    assert.equal((await poll).highWatermark, 1);

    assert.deepEqual(
      broker.sent.map(({ connection, request }) => [connection, request.maxWaitMs]),
      [
        ["data", 0],
        ["poll", LIMITS.maxWaitMs],
        ["data", 0],
        ["data", LIMITS.maxWaitMs],
      ],
    );
  });

  it("(the broker as modelled: one connection for both, the busy partition's read waits for the poll)", async () => {
    const broker = new InOrderBroker({ 0: 0, 1: 100 });
    const one = broker.connection("one");
    const coalescer = new FetchCoalescer({ data: one, poll: one });
    await coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS);

    const poll = coalescer.fetch(on(1), { topic: "a", partition: 0 }, 0, LIMITS);
    await settledYet(poll);
    const read = coalescer.fetch(on(1), { topic: "a", partition: 1 }, 0, LIMITS);
    assert.equal(await settledYet(read), false);
    broker.expire();
    assert.equal((await read).highWatermark, 100);
  });

  it("keeps one long poll per broker out; partitions that catch up meanwhile go in the next", async () => {
    const broker = new InOrderBroker({ 0: 0, 1: 0, 2: 0 });
    const coalescer = new FetchCoalescer({
      data: broker.connection("data"),
      poll: broker.connection("poll"),
    });
    const tps = [0, 1, 2].map((partition) => ({ topic: "a", partition }));
    await Promise.all(tps.map((tp) => coalescer.fetch(on(1), tp, 0, LIMITS)));

    const first = coalescer.fetch(on(1), tps[0] ?? assert.fail(), 0, LIMITS);
    await settledYet(first);
    const later = [1, 2].map((p) => coalescer.fetch(on(1), tps[p] ?? assert.fail(), 0, LIMITS));
    await settledYet(Promise.all(later));
    assert.equal(broker.sent.filter((s) => s.connection === "poll").length, 1, "the second poll waits");
    broker.append(0);
    await first;
    broker.append(2);
    await Promise.all(later);

    assert.deepEqual(
      broker.sent
        .filter((s) => s.connection === "poll")
        .map((s) => s.request.topics[0]?.partitions.map((p) => p.partition)),
      [[0], [1, 2]],
    );
  });

  it("answers at once a caught-up partition's fetch that asks not to wait, and one whose end it no longer knows", async () => {
    const broker = new InOrderBroker({ 0: 0 });
    const coalescer = new FetchCoalescer({
      data: broker.connection("data"),
      poll: broker.connection("poll"),
    });
    const tp = { topic: "a", partition: 0 };
    await coalescer.fetch(on(1), tp, 0, LIMITS);
    await coalescer.fetch(on(1), tp, 0, { ...LIMITS, maxWaitMs: 0 });
    assert.deepEqual(
      broker.sent.map((s) => s.connection),
      ["data", "data"],
    );

    // A refusal (a leader change) says nothing of where the log ends at the next leader.
    const refusing = new FetchCoalescer({
      data: broker.connection("data"),
      poll: async (_brokerId, request) => {
        broker.sent.push({ connection: "poll", request });
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          topics: [{ topic: "a", partitions: [answer(0, KafkaErrorCode.NOT_LEADER_OR_FOLLOWER)] }],
        };
      },
    });
    await refusing.fetch(on(1), tp, 0, LIMITS);
    assert.equal(
      (await refusing.fetch(on(1), tp, 0, LIMITS)).errorCode,
      KafkaErrorCode.NOT_LEADER_OR_FOLLOWER,
    );
    await refusing.fetch(on(1), tp, 0, LIMITS);
    assert.deepEqual(
      broker.sent.slice(2).map((s) => s.connection),
      ["data", "poll", "data"],
    );
  });

  it("forgets an end learnt from another leader or leader epoch: a new leader's high watermark may lag the old one's", async () => {
    // Leader 1 (epoch 4) said the log ends at 100; leader 2, elected at epoch 5, holds the records
    // up to 100 too, but its high watermark still says 45 until its followers fetch again.
    const leaderChange = () => {
      const old = new InOrderBroker({ 0: 100 });
      const next = new InOrderBroker({ 0: 45 });
      const lane =
        (name: string): FetchSender =>
        (brokerId, request) =>
          (brokerId === 1 ? old : next).connection(name)(brokerId, request);
      return { next, coalescer: new FetchCoalescer({ data: lane("data"), poll: lane("poll") }) };
    };
    const { next, coalescer } = leaderChange();
    const tp = { topic: "a", partition: 0 };
    await coalescer.fetch(on(1, 4), tp, 0, LIMITS);

    // At 50, below the old leader's end: a read that must not be held (and hold the reads behind
    // it on the data connection) for maxWaitMs at the new leader.
    const read = coalescer.fetch(on(2, 5), tp, 50, LIMITS);
    assert.equal(await settledYet(read), true, "answered at once by the new leader");
    // Its answer is the new leader's: caught up by it, the next fetch is a poll.
    const poll = coalescer.fetch(on(2, 5), tp, 50, LIMITS);
    assert.equal(await settledYet(poll), false, "held as a long poll");
    next.expire();
    await poll;
    // The same broker under a new epoch (elected again) has not answered yet either.
    await coalescer.fetch(on(2, 6), tp, 40, LIMITS);
    assert.deepEqual(
      next.sent.map((s) => [s.connection, s.request.maxWaitMs]),
      [
        ["data", 0],
        ["poll", 500],
        ["data", 0],
      ],
    );

    // Without leader epochs (a broker before Metadata v10 says none: -1), the leader tells alone.
    const noEpochs = leaderChange().coalescer;
    await noEpochs.fetch(on(1), tp, 0, LIMITS);
    assert.equal(await settledYet(noEpochs.fetch(on(2), tp, 50, LIMITS)), true, "not held at leader 2");
  });

  it("takes the last stable offset as the end when reading committed records, the high watermark otherwise", async () => {
    const sent: string[] = [];
    const lane =
      (name: string): FetchSender =>
      async () => {
        sent.push(name);
        return {
          throttleTimeMs: 0,
          errorCode: 0,
          topics: [{ topic: "a", partitions: [{ ...answer(0), highWatermark: 10, lastStableOffset: 5 }] }],
        };
      };
    const tp = { topic: "a", partition: 0 };
    for (const isolation of [IsolationLevel.READ_COMMITTED, IsolationLevel.READ_UNCOMMITTED]) {
      const coalescer = new FetchCoalescer({ data: lane("data"), poll: lane("poll") }, isolation);
      await coalescer.fetch(on(1), tp, 0, LIMITS);
      await coalescer.fetch(on(1), tp, 5, LIMITS);
    }
    assert.deepEqual(sent, ["data", "poll", "data", "data"]);
  });

  it("fails at once the fetches not sent when closed, and sends nothing more", async () => {
    const broker = new InOrderBroker({ 0: 0, 1: 0 });
    const coalescer = new FetchCoalescer({
      data: broker.connection("data"),
      poll: broker.connection("poll"),
    });
    const tps = [0, 1].map((partition) => ({ topic: "a", partition }));
    await Promise.all(tps.map((tp) => coalescer.fetch(on(1), tp, 0, LIMITS)));
    const poll = coalescer.fetch(on(1), tps[0] ?? assert.fail(), 0, LIMITS);
    await settledYet(poll);
    const queued = coalescer.fetch(on(1), tps[1] ?? assert.fail(), 0, LIMITS);
    await settledYet(queued);

    coalescer.close();
    await assert.rejects(queued, /source reader is closed/);
    await assert.rejects(
      coalescer.fetch(on(1), tps[1] ?? assert.fail(), 0, LIMITS),
      /source reader is closed/,
    );
    broker.expire();
    assert.equal((await poll).errorCode, 0, "the request out is answered as it comes");
    await settledYet(poll);
    assert.equal(broker.sent.length, 2, "the first fetch and the poll only");

    // Closed in the turn of the call: the request it was to join is not sent either.
    const other = new FetchCoalescer({ data: broker.connection("data"), poll: broker.connection("poll") });
    const unsent = other.fetch(on(1), tps[0] ?? assert.fail(), 0, LIMITS);
    other.close();
    await assert.rejects(unsent, /source reader is closed/);
    await settledYet(unsent);
    assert.equal(broker.sent.length, 2);
  });
});
