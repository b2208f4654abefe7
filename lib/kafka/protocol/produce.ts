/**
 * Produce v3..v7 carrying record batches we encoded ourselves (lib/kafka/record-batch.ts), so a
 * retry resends exactly the same bytes with the same base sequence. The request layout is the
 * same in v3..v7; the response gains log_start_offset in v5.
 */
import { Decoder, Encoder, type KafkajsRequest, type KafkajsResponse } from "../kafkajs-internals.js";

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

export function encodeProduceRequest(request: ProduceRequest) {
  return new Encoder()
    .writeString(null) // transactional_id: idempotent, not transactional
    .writeInt16(request.acks)
    .writeInt32(request.timeoutMs)
    .writeArray(
      request.topics.map((t) =>
        new Encoder()
          .writeString(t.topic)
          .writeArray(t.partitions.map((p) => new Encoder().writeInt32(p.partition).writeBytes(p.records))),
      ),
    );
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
