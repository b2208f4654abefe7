/**
 * Combines concurrent fetches of partitions led by the same broker into one Fetch request, as a
 * consumer does. A broker answers the requests of one connection in order, so separate requests
 * would queue behind a caught-up partition's long poll; one combined request returns as soon as
 * any of its partitions has data.
 */
import type { FetchLimits, TopicPartition } from "../core/model.js";
import { sendRequest } from "./connection.js";
import { KafkaErrorCode, KafkaPartitionError } from "./error-codes.js";
import type { KafkajsCluster } from "./kafkajs-internals.js";
import {
  FETCH_API_KEY,
  FETCH_VERSIONS,
  type FetchPartitionResponse,
  type FetchRequest,
  type FetchResponse,
  fetchRequest,
  IsolationLevel,
} from "./protocol/fetch.js";

/** Sends one Fetch request to one broker. */
export type FetchSender = (brokerId: number, request: FetchRequest) => Promise<FetchResponse>;

interface Waiter {
  readonly tp: TopicPartition;
  readonly offset: number;
  readonly limits: FetchLimits;
  resolve(response: FetchPartitionResponse): void;
  reject(error: unknown): void;
}

const MAX_INT32 = 2 ** 31 - 1;

export class FetchCoalescer {
  private readonly queues = new Map<number, Waiter[]>();
  /** Brokers with a request scheduled or in flight; later calls wait for the next round. */
  private readonly busy = new Set<number>();
  private readonly send: FetchSender;

  constructor(cluster: KafkajsCluster, requestTimeoutMs: number, send?: FetchSender) {
    this.send = send ?? brokerFetchSender(cluster, requestTimeoutMs);
  }

  fetch(
    brokerId: number,
    tp: TopicPartition,
    offset: number,
    limits: FetchLimits,
  ): Promise<FetchPartitionResponse> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(brokerId) ?? [];
      queue.push({ tp, offset, limits, resolve, reject });
      this.queues.set(brokerId, queue);
      this.schedule(brokerId);
    });
  }

  private schedule(brokerId: number): void {
    if (this.busy.has(brokerId)) return;
    this.busy.add(brokerId);
    // Deferred to the next macrotask so that calls made in the same turn join one request.
    setImmediate(() => void this.flush(brokerId));
  }

  private async flush(brokerId: number): Promise<void> {
    const { round, rest } = takeRound(this.queues.get(brokerId) ?? []);
    this.queues.set(brokerId, rest);
    try {
      const response = await this.send(brokerId, buildRequest(round));
      settle(round, response);
    } catch (error) {
      for (const waiter of round) waiter.reject(error);
    } finally {
      this.busy.delete(brokerId);
      if ((this.queues.get(brokerId)?.length ?? 0) > 0) this.schedule(brokerId);
      else this.queues.delete(brokerId);
    }
  }
}

/** One waiter per partition: a request may name a partition once; repeats wait for the next round. */
function takeRound(queue: readonly Waiter[]): { round: Waiter[]; rest: Waiter[] } {
  const round: Waiter[] = [];
  const rest: Waiter[] = [];
  const seen = new Set<string>();
  for (const waiter of queue) {
    const key = `${waiter.tp.partition}:${waiter.tp.topic}`;
    if (seen.has(key)) rest.push(waiter);
    else {
      seen.add(key);
      round.push(waiter);
    }
  }
  return { round, rest };
}

export function buildRequest(round: readonly Waiter[]): FetchRequest {
  const topics = new Map<string, { partition: number; fetchOffset: number; maxBytes: number }[]>();
  let maxBytes = 0;
  for (const w of round) {
    const partitions = topics.get(w.tp.topic) ?? [];
    partitions.push({ partition: w.tp.partition, fetchOffset: w.offset, maxBytes: w.limits.maxBytes });
    topics.set(w.tp.topic, partitions);
    maxBytes = Math.min(MAX_INT32, maxBytes + w.limits.maxBytes);
  }
  return {
    // The shortest wait wins: a caller that asked not to wait must not be held by another's long poll.
    maxWaitMs: Math.min(...round.map((w) => w.limits.maxWaitMs)),
    minBytes: 1,
    maxBytes,
    isolationLevel: IsolationLevel.READ_COMMITTED,
    topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })),
  };
}

function settle(round: readonly Waiter[], response: FetchResponse): void {
  const byPartition = new Map<string, FetchPartitionResponse>();
  for (const t of response.topics) {
    for (const p of t.partitions) byPartition.set(`${p.partition}:${t.topic}`, p);
  }
  for (const waiter of round) {
    const partition = byPartition.get(`${waiter.tp.partition}:${waiter.tp.topic}`);
    if (response.errorCode !== KafkaErrorCode.NONE)
      waiter.reject(new KafkaPartitionError(response.errorCode));
    else if (partition === undefined)
      waiter.reject(new KafkaPartitionError(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    else waiter.resolve(partition);
  }
}

function brokerFetchSender(cluster: KafkajsCluster, requestTimeoutMs: number): FetchSender {
  return async (brokerId, request) => {
    const broker = await cluster.findBroker({ nodeId: brokerId });
    // A long poll legitimately takes maxWaitMs before the broker answers.
    const timeout = requestTimeoutMs + request.maxWaitMs;
    return sendRequest(
      broker,
      "Fetch",
      FETCH_API_KEY,
      FETCH_VERSIONS,
      (v) => fetchRequest(v, request),
      timeout,
    );
  };
}
