/**
 * Produce v3..v7 carrying one record batch we encoded ourselves (lib/kafka/codec/record-batch.ts), so a
 * retry resends exactly the same bytes with the same base sequence. The request layout is the
 * same in v3..v7; the response gains log_start_offset in v5. One partition per request: a write
 * is ordered per partition and acknowledged on its own.
 */
import { bodyLength, Decoder, type RequestBody } from "./kafkajs-internals.js";

export const PRODUCE_API_KEY = 0;
export const PRODUCE_VERSIONS = [7, 6, 5, 4, 3] as const;

/** The request body up to its record set. */
export interface ProduceHead {
  /** -1 = all in-sync replicas. */
  readonly acks: number;
  readonly timeoutMs: number;
  /** The topic name, UTF-8. */
  readonly topic: Buffer;
  readonly partition: number;
}

/** Bytes of a produce body in front of its record set: the batch is encoded after this headroom. */
export function produceHeadSize(topic: Buffer): number {
  // transactional_id, acks, timeout, topic count, name, partition count, partition, record set size
  return 2 + 2 + 4 + 4 + 2 + topic.length + 4 + 4 + 4;
}

/**
 * Writes the head of a produce body into the first produceHeadSize(topic) bytes of `body` (of its
 * first part); the rest of `body` is the record set.
 */
export function writeProduceHead<B extends RequestBody>(body: B, head: ProduceHead): B {
  const headSize = produceHeadSize(head.topic);
  const first = firstPart(body, headSize);
  const at = first.writeInt16BE(-1, 0); // transactional_id: idempotent, not transactional
  writePartitionHead(first, at, head, bodyLength(body) - headSize);
  return body;
}

/** The head's fields after the transactional id, from `at` of `first` on. */
export function writePartitionHead(
  first: Buffer,
  at: number,
  head: ProduceHead,
  recordSetSize: number,
): void {
  at = first.writeInt16BE(head.acks, at);
  at = first.writeInt32BE(head.timeoutMs, at);
  at = first.writeInt32BE(1, at);
  at = first.writeInt16BE(head.topic.length, at);
  at += head.topic.copy(first, at);
  at = first.writeInt32BE(1, at);
  at = first.writeInt32BE(head.partition, at);
  first.writeInt32BE(recordSetSize, at);
}

/** The part of `body` a head of `headSize` bytes is written into. */
export function firstPart(body: RequestBody, headSize: number): Buffer {
  const first = Buffer.isBuffer(body) ? body : body[0];
  if (first === undefined || first.length < headSize)
    throw new RangeError("produce body shorter than its head");
  return first;
}

export interface ProducePartitionResponse {
  readonly partition: number;
  readonly errorCode: number;
  readonly baseOffset: number;
  readonly logAppendTime: number;
  /** -1 before v5. */
  readonly logStartOffset: number;
}

export interface ProduceResponse {
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly ProducePartitionResponse[];
  }[];
  readonly throttleTimeMs: number;
}

export function decodeProduceResponse(version: number, payload: Buffer): ProduceResponse {
  if (version < 3 || version > 7) throw new RangeError(`Produce v${version} is not implemented`);
  const decoder = new Decoder(payload);
  const topics = decoder.readArray((d) => ({
    topic: d.readString() ?? "",
    partitions: d.readArray(
      (p): ProducePartitionResponse => ({
        partition: p.readInt32(),
        errorCode: p.readInt16(),
        baseOffset: Number(p.readInt64()),
        logAppendTime: Number(p.readInt64()),
        logStartOffset: version >= 5 ? Number(p.readInt64()) : -1,
      }),
    ),
  }));
  return { topics, throttleTimeMs: decoder.readInt32() };
}
