/**
 * Produce v3..v7 carrying record batches we encoded ourselves (lib/kafka/record-batch.ts), so a
 * retry resends exactly the same bytes with the same base sequence. The request layout is the
 * same in v3..v7; the response gains log_start_offset in v5.
 */
import {
  Decoder,
  encoderOf,
  type KafkajsEncoder,
  type KafkajsRequest,
  type KafkajsResponse,
} from "../kafkajs-internals.js";

export const PRODUCE_API_KEY = 0;
export const PRODUCE_VERSIONS = [7, 6, 5, 4, 3] as const;

export interface ProduceRequest {
  /** -1 = all in-sync replicas. */
  readonly acks: number;
  readonly timeoutMs: number;
  readonly topics: readonly {
    readonly topic: string;
    readonly partitions: readonly { readonly partition: number; readonly records: Buffer }[];
  }[];
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

/**
 * The request body laid out in one buffer of its exact size: the record batches, by far the
 * largest part, are copied once here and once more by kafkajs into the request frame.
 */
export function encodeProduceRequest(request: ProduceRequest): KafkajsEncoder {
  const topics = request.topics.map((t) => ({ ...t, name: Buffer.from(t.topic, "utf8") }));
  let size = 2 + 2 + 4 + 4; // transactional_id (null), acks, timeout, topic count
  for (const t of topics) {
    size += 2 + t.name.length + 4;
    for (const p of t.partitions) size += 4 + 4 + p.records.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.writeInt16BE(-1, 0); // transactional_id: idempotent, not transactional
  at = out.writeInt16BE(request.acks, at);
  at = out.writeInt32BE(request.timeoutMs, at);
  at = out.writeInt32BE(topics.length, at);
  for (const t of topics) {
    at = out.writeInt16BE(t.name.length, at);
    at += t.name.copy(out, at);
    at = out.writeInt32BE(t.partitions.length, at);
    for (const p of t.partitions) {
      at = out.writeInt32BE(p.partition, at);
      at = out.writeInt32BE(p.records.length, at);
      at += p.records.copy(out, at);
    }
  }
  return encoderOf(out);
}

export function decodeProduceResponse(version: number, payload: Buffer): ProduceResponse {
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

export function produceRequest(
  version: number,
  request: ProduceRequest,
): { request: KafkajsRequest; response: KafkajsResponse<ProduceResponse> } {
  if (version < 3 || version > 7) throw new RangeError(`Produce v${version} is not implemented`);
  return {
    request: {
      apiKey: PRODUCE_API_KEY,
      apiVersion: version,
      apiName: "Produce",
      expectResponse: () => request.acks !== 0,
      encode: async () => encodeProduceRequest(request),
    },
    // Per-partition errors are handled by the writer; parse must not throw on them as kafkajs's does.
    response: { decode: async (payload) => decodeProduceResponse(version, payload), parse: async (d) => d },
  };
}
