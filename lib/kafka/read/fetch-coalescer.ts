/**
 * Combines concurrent fetches of partitions led by the same broker into one Fetch request, as a
 * consumer does. Each partition keeps the leader epoch its caller routed by (KIP-320): one
 * partition's refusal fails only its own caller.
 *
 * A broker answers the requests of one connection in order, so a request it holds (all its
 * partitions caught up: a long poll) holds every request sent after it on that connection. Fetches
 * of partitions with records to read, which the broker answers at once, therefore go over one
 * connection, the long polls of caught-up partitions over another. Without that split, a
 * partition that had caught up held the others' reads for up to maxWaitMs at a time: the mock
 * bench's copy beside a caught-up topic ran at 44k records/s, 215-272k with it; on one real broker
 * (its partitions catching up one by one) a throw-away script copied 8.7-72k records/s, 102-135k
 * with maxWaitMs 10.
 *
 * Up to MAX_IN_FLIGHT requests of the first kind per broker: a partition whose answer came back
 * asks again at once instead of waiting for the request of the others to return, and the broker
 * prepares the next answer while the last one is still being received. Measured with the bench:
 * the worker waited on fetches half its time with one request per broker; two took the copy from
 * 123k to 133k records/s, and three (with pipelined writes and read-ahead in place) from a mean of
 * 155k to 163k over five runs each.
 */
import type { FetchLimits, TopicPartition } from "../../core/model.js";
import { ReplicatorError } from "../../errors.js";
import { answerPool } from "../wire/answer-pool.js";
import type { KafkaClusterClient, PartitionRoute } from "../wire/cluster-client.js";
import { KafkaErrorCode, KafkaPartitionError } from "../wire/error-codes.js";
import {
  FETCH_API_KEY,
  FETCH_VERSIONS,
  type FetchPartitionRequest,
  type FetchPartitionResponse,
  type FetchRequest,
  type FetchResponse,
  fetchRequest,
  IsolationLevel,
  type IsolationLevelValue,
  readableEnd,
} from "../wire/fetch.js";

/**
 * The most one combined request asks for, as Kafka's consumer (fetch.max.bytes, 50 MiB), or one
 * partition's limit when that is larger: however many partitions it carries, an answer stays far
 * below MAX_FRAME_BYTES (framed-socket.ts), which a broker with a raised fetch.max.bytes would
 * otherwise pass and fail every fetch with. Partitions the answer has no room for come back
 * empty and are asked again in the next request.
 */
export const MAX_REQUEST_BYTES = 50 * 1024 * 1024;

/** Sends one Fetch request to one broker. */
export type FetchSender = (brokerId: number, request: FetchRequest) => Promise<FetchResponse>;

/**
 * Where the requests go: `data` for partitions with records to read, `poll` for the long polls
 * of caught-up ones. Two connections of their own: a broker answers a connection's requests in
 * order, so a poll held there for maxWaitMs would hold every request sent after it.
 */
export interface FetchSenders {
  readonly data: FetchSender;
  readonly poll: FetchSender;
}

interface Waiter {
  readonly tp: TopicPartition;
  readonly leaderEpoch: number;
  readonly offset: number;
  readonly limits: FetchLimits;
  /** What the request may wait at the broker for this partition (see FetchCoalescer.fetch). */
  readonly maxWaitMs: number;
  resolve(response: FetchPartitionResponse): void;
  reject(error: unknown): void;
}

const MAX_INT32 = 2 ** 31 - 1;
const MAX_IN_FLIGHT = 3;

export class FetchCoalescer {
  /** Partitions with records to read, pipelined: up to MAX_IN_FLIGHT requests per broker. */
  readonly #data: Lane;
  /**
   * The long polls, one request per broker at a time: more would queue behind the first anyway.
   * A partition that catches up while one is out waits for it to return (at most maxWaitMs, or
   * at once when any of its partitions gets records), as with Kafka's consumer, which keeps one
   * fetch per broker in flight.
   */
  readonly #poll: Lane;
  /**
   * Per partition, the end of what it can read (high watermark or last stable offset) by its last
   * answer, and the leader and leader epoch that answered.
   */
  readonly #ends = new Map<string, KnownEnd>();
  readonly #readCommitted: boolean;

  constructor(senders: FetchSenders, isolationLevel: IsolationLevelValue = IsolationLevel.READ_COMMITTED) {
    this.#readCommitted = isolationLevel === IsolationLevel.READ_COMMITTED;
    const settled = (brokerId: number, round: readonly Waiter[], response: FetchResponse) => {
      const answers = answersByPartition(response);
      this.#learnEnds(brokerId, round, response.errorCode, answers);
      settle(round, response.errorCode, answers);
    };
    const build = (round: readonly Waiter[]) => buildRequest(round, isolationLevel);
    this.#data = new Lane(senders.data, MAX_IN_FLIGHT, build, settled);
    this.#poll = new Lane(senders.poll, 1, build, settled);
  }

  /**
   * Fetches `tp` from `route.leader`, as of `route.leaderEpoch`. A fetch of a partition caught up
   * by its last answer (high watermark, or last stable offset when reading committed) that allows
   * a wait is a long poll. Any other has records to read, which the broker answers at once
   * (minBytes 1), so its request never holds the next ones; it keeps the caller's wait, which a
   * broker before Kafka 3.8 gives a read from tiered storage, and cancels at 0 (KAFKA-15776). A
   * partition whose end is not known (its first fetch, after an error answer, or learnt from
   * another leader or leader epoch) is asked not to wait: caught up, its request would be held
   * like a poll. A new leader's high watermark can lag the old one's until its followers fetch
   * again, so an end from before a leader change may be past what the new leader serves.
   */
  fetch(
    route: PartitionRoute,
    tp: TopicPartition,
    offset: number,
    limits: FetchLimits,
  ): Promise<FetchPartitionResponse> {
    const known = this.#ends.get(partitionKey(tp.topic, tp.partition));
    const end =
      known?.leader === route.leader && known.leaderEpoch === route.leaderEpoch ? known.end : undefined;
    const caughtUp = limits.maxWaitMs > 0 && end !== undefined && offset >= end;
    const maxWaitMs = end === undefined ? 0 : limits.maxWaitMs;
    return new Promise((resolve, reject) => {
      const waiter = { tp, leaderEpoch: route.leaderEpoch, offset, limits, maxWaitMs, resolve, reject };
      (caughtUp ? this.#poll : this.#data).add(route.leader, waiter);
    });
  }

  /**
   * Fails the fetches not sent yet and sends no more: the reader is closing, and a request sent
   * now would open its connections again.
   */
  close(): void {
    this.#data.close();
    this.#poll.close();
  }

  #learnEnds(
    brokerId: number,
    round: readonly Waiter[],
    errorCode: number,
    answers: ReadonlyMap<string, FetchPartitionResponse>,
  ): void {
    if (errorCode !== KafkaErrorCode.NONE) return;
    for (const waiter of round) {
      const key = keyOf(waiter);
      const p = answers.get(key);
      const end = p === undefined ? -1 : readableEnd(p, this.#readCommitted);
      // An error answer (NOT_LEADER, OFFSET_OUT_OF_RANGE) says nothing of the end the next fetch meets.
      if (p?.errorCode === KafkaErrorCode.NONE && end >= 0)
        this.#ends.set(key, { end, leader: brokerId, leaderEpoch: waiter.leaderEpoch });
      else this.#ends.delete(key);
    }
  }
}

interface KnownEnd {
  readonly end: number;
  readonly leader: number;
  readonly leaderEpoch: number;
}

/** One connection's requests: waiters queued per broker, combined into requests as they can go. */
class Lane {
  readonly #queues = new Map<number, Waiter[]>();
  /** Brokers with a request about to be sent: calls made meanwhile join it. */
  readonly #scheduled = new Set<number>();
  /** Requests in flight per broker; calls beyond maxInFlight wait for one to return. */
  readonly #inFlight = new Map<number, number>();
  readonly #send: FetchSender;
  readonly #maxInFlight: number;
  readonly #build: (round: readonly Waiter[]) => FetchRequest;
  readonly #settle: (brokerId: number, round: readonly Waiter[], response: FetchResponse) => void;
  #closed = false;

  constructor(
    send: FetchSender,
    maxInFlight: number,
    build: (round: readonly Waiter[]) => FetchRequest,
    settled: (brokerId: number, round: readonly Waiter[], response: FetchResponse) => void,
  ) {
    this.#send = send;
    this.#maxInFlight = maxInFlight;
    this.#build = build;
    this.#settle = settled;
  }

  close(): void {
    this.#closed = true;
    for (const queue of this.#queues.values())
      for (const waiter of queue.splice(0)) waiter.reject(closedError());
  }

  add(brokerId: number, waiter: Waiter): void {
    if (this.#closed) {
      waiter.reject(closedError());
      return;
    }
    const queue = this.#queues.get(brokerId) ?? [];
    queue.push(waiter);
    this.#queues.set(brokerId, queue);
    this.#schedule(brokerId);
  }

  #schedule(brokerId: number): void {
    if (
      this.#closed ||
      this.#scheduled.has(brokerId) ||
      (this.#inFlight.get(brokerId) ?? 0) >= this.#maxInFlight
    )
      return;
    this.#scheduled.add(brokerId);
    // Deferred to the next macrotask so that calls made in the same turn join one request.
    setImmediate(() => void this.#flush(brokerId));
  }

  async #flush(brokerId: number): Promise<void> {
    this.#scheduled.delete(brokerId);
    if (this.#closed) return;
    const { round, rest } = takeRound(this.#queues.get(brokerId) ?? []);
    this.#queues.set(brokerId, rest);
    this.#inFlight.set(brokerId, (this.#inFlight.get(brokerId) ?? 0) + 1);
    try {
      const response = await this.#send(brokerId, this.#build(round));
      this.#settle(brokerId, round, response);
    } catch (error) {
      for (const waiter of round) waiter.reject(error);
    } finally {
      const inFlight = (this.#inFlight.get(brokerId) ?? 1) - 1;
      if (inFlight > 0) this.#inFlight.set(brokerId, inFlight);
      else this.#inFlight.delete(brokerId);
      if ((this.#queues.get(brokerId)?.length ?? 0) > 0) this.#schedule(brokerId);
      else if (inFlight === 0 && !this.#scheduled.has(brokerId)) this.#queues.delete(brokerId);
    }
  }
}

function closedError(): ReplicatorError {
  return new ReplicatorError("KAFKA_FATAL", "source reader is closed");
}

function partitionKey(topic: string, partition: number): string {
  return `${partition}:${topic}`;
}

function keyOf(waiter: Waiter): string {
  return partitionKey(waiter.tp.topic, waiter.tp.partition);
}

/** One waiter per partition: a request may name a partition once; repeats wait for the next round. */
function takeRound(queue: readonly Waiter[]): { round: Waiter[]; rest: Waiter[] } {
  const round: Waiter[] = [];
  const rest: Waiter[] = [];
  const seen = new Set<string>();
  for (const waiter of queue) {
    const key = keyOf(waiter);
    if (seen.has(key)) rest.push(waiter);
    else {
      seen.add(key);
      round.push(waiter);
    }
  }
  return { round, rest };
}

export function buildRequest(
  round: readonly Waiter[],
  isolationLevel: IsolationLevelValue = IsolationLevel.READ_COMMITTED,
): FetchRequest {
  const topics = new Map<string, FetchPartitionRequest[]>();
  let maxBytes = 0;
  let largest = 0;
  for (const w of round) {
    const partitions = topics.get(w.tp.topic) ?? [];
    partitions.push({
      partition: w.tp.partition,
      currentLeaderEpoch: w.leaderEpoch,
      fetchOffset: w.offset,
      maxBytes: w.limits.maxBytes,
    });
    topics.set(w.tp.topic, partitions);
    maxBytes = Math.min(MAX_INT32, maxBytes + w.limits.maxBytes);
    largest = Math.max(largest, w.limits.maxBytes);
  }
  maxBytes = Math.min(maxBytes, Math.max(MAX_REQUEST_BYTES, largest));
  return {
    // The shortest wait wins: a caller that asked not to wait must not be held by another's long poll.
    maxWaitMs: Math.min(...round.map((w) => w.maxWaitMs)),
    minBytes: 1,
    maxBytes,
    isolationLevel,
    topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
  };
}

function answersByPartition(response: FetchResponse): Map<string, FetchPartitionResponse> {
  const byPartition = new Map<string, FetchPartitionResponse>();
  for (const t of response.topics) {
    for (const p of t.partitions) byPartition.set(partitionKey(t.topic, p.partition), p);
  }
  return byPartition;
}

/** Each waiter's answer, or its refusal: the whole request's error, or its partition missing. */
function settle(
  round: readonly Waiter[],
  errorCode: number,
  answers: ReadonlyMap<string, FetchPartitionResponse>,
): void {
  for (const waiter of round) {
    const partition = answers.get(keyOf(waiter));
    if (errorCode !== KafkaErrorCode.NONE) waiter.reject(new KafkaPartitionError(errorCode));
    else if (partition === undefined)
      waiter.reject(new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    else {
      // Before any caller runs: one of them must not give the answer back under the others.
      answerPool.hold(partition.records);
      waiter.resolve(partition);
    }
  }
}

export function brokerFetchSender(client: KafkaClusterClient, requestTimeoutMs: number): FetchSender {
  const api = { apiName: "Fetch", apiKey: FETCH_API_KEY, versions: FETCH_VERSIONS };
  return async (brokerId, request) => {
    const broker = await client.broker(brokerId);
    // A long poll legitimately takes maxWaitMs before the broker answers.
    return client.request(broker, api, (v) => fetchRequest(v, request), requestTimeoutMs + request.maxWaitMs);
  };
}
