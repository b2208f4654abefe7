/**
 * Fetch v11 with the record sets left as raw bytes. kafkajs's own Fetch decoder turns records into
 * objects and loses the order of interleaved repeated headers; we decode the bytes ourselves with
 * lib/kafka/codec/record-batch.ts instead. Each partition carries the leader epoch the reader believes
 * current (KIP-320, Fetch v9+), so a broker that is not at that epoch refuses to answer.
 */
import { Decoder, Encoder, type KafkajsCall, type KafkajsDecoder } from "./kafkajs-internals.js";

export const FETCH_API_KEY = 1;
export const FETCH_VERSIONS = [11] as const;

export const IsolationLevel = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const;
export type IsolationLevelValue = (typeof IsolationLevel)[keyof typeof IsolationLevel];

export interface FetchPartitionRequest {
  readonly partition: number;
  /**
   * The leader epoch we believe current (KIP-320): a broker at another epoch refuses with
   * FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH instead of answering from its own log.
   * @default -1 (no check, Kafka's own default for the field)
   */
  readonly currentLeaderEpoch?: number;
  readonly fetchOffset: number;
  readonly maxBytes: number;
}

export interface FetchRequest {
  readonly maxWaitMs: number;
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly isolationLevel: number;
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly FetchPartitionRequest[];
  }[];
}

export interface AbortedTransaction {
  readonly producerId: bigint;
  readonly firstOffset: number;
}

export interface FetchPartitionResponse {
  readonly partition: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  readonly abortedTransactions: readonly AbortedTransaction[];
  /** Raw record batches; the last one may be cut short by the broker's size limit. */
  readonly records: Buffer;
}

/**
 * The end of what a fetch of the partition can read: the last stable offset when reading
 * committed records (read_committed stops there), else the high watermark; -1 when not told.
 */
export function readableEnd(partition: FetchPartitionResponse, readCommitted: boolean): number {
  return readCommitted && partition.lastStableOffset >= 0
    ? partition.lastStableOffset
    : partition.highWatermark;
}

export interface FetchResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly FetchPartitionResponse[];
  }[];
}

export function encodeFetchRequest(request: FetchRequest) {
  return new Encoder()
    .writeInt32(-1) // replica_id: a consumer, not a follower
    .writeInt32(request.maxWaitMs)
    .writeInt32(request.minBytes)
    .writeInt32(request.maxBytes)
    .writeInt8(request.isolationLevel)
    .writeInt32(0) // session_id: no incremental fetch session
    .writeInt32(-1) // session_epoch: -1 = full fetch, do not create a session
    .writeArray(
      request.topics.map((t) =>
        new Encoder().writeString(t.topic).writeArray(
          t.partitions.map((p) =>
            new Encoder()
              .writeInt32(p.partition)
              .writeInt32(p.currentLeaderEpoch ?? -1)
              .writeInt64(p.fetchOffset)
              .writeInt64(-1) // log_start_offset: only followers send it
              .writeInt32(p.maxBytes),
          ),
        ),
      ),
    )
    .writeArray([]) // forgotten_topics_data
    .writeString(""); // rack_id
}

export function decodeFetchResponse(payload: Buffer): FetchResponse {
  const decoder = new Decoder(payload);
  const throttleTimeMs = decoder.readInt32();
  const errorCode = decoder.readInt16();
  decoder.readInt32(); // session_id
  const topics = decoder.readArray((d) => ({
    topic: d.readString() ?? "",
    partitions: d.readArray(decodePartition),
  }));
  return { throttleTimeMs, errorCode, topics };
}

function decodePartition(d: KafkajsDecoder): FetchPartitionResponse {
  const partition = d.readInt32();
  const errorCode = d.readInt16();
  const highWatermark = Number(d.readInt64());
  const lastStableOffset = Number(d.readInt64());
  const logStartOffset = Number(d.readInt64());
  const abortedTransactions = d.readArray((a) => ({
    producerId: a.readInt64(),
    firstOffset: Number(a.readInt64()),
  }));
  d.readInt32(); // preferred_read_replica: we always read from the leader
  const records = d.readBytes() ?? Buffer.alloc(0);
  return {
    partition,
    errorCode,
    highWatermark,
    lastStableOffset,
    logStartOffset,
    abortedTransactions,
    records,
  };
}

export function fetchRequest(version: number, request: FetchRequest): KafkajsCall<FetchResponse> {
  return {
    request: {
      apiKey: FETCH_API_KEY,
      apiVersion: version,
      apiName: "Fetch",
      encode: async () => encodeFetchRequest(request),
    },
    // Per-partition errors are handled by the reader; parse must not throw on them as kafkajs's does.
    response: { decode: async (payload) => decodeFetchResponse(payload), parse: async (decoded) => decoded },
  };
}
