/**
 * CreatePartitions v0-v1 (KIP-195; the two share one layout, v1 only changes throttling). kafkajs
 * 2.2.4 has the request, but its parser throws the first topic's error without the topic's name;
 * the admin needs every topic's code (INVALID_PARTITIONS may mean "already that many").
 */
import { Decoder, Encoder, type KafkajsCall } from "./kafkajs-internals.js";

export const CREATE_PARTITIONS_API = {
  apiName: "CreatePartitions",
  apiKey: 37,
  versions: [1, 0],
} as const;

export interface PartitionGrowth {
  readonly topic: string;
  /** The topic's new total partition count. */
  readonly count: number;
}

export interface TopicResult {
  readonly topic: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export function createPartitionsRequest(
  version: number,
  growths: readonly PartitionGrowth[],
  timeoutMs: number,
): KafkajsCall<TopicResult[]> {
  return {
    request: {
      apiKey: CREATE_PARTITIONS_API.apiKey,
      apiVersion: version,
      apiName: CREATE_PARTITIONS_API.apiName,
      encode: async () =>
        new Encoder()
          .writeArray(
            growths.map(
              (g) => new Encoder().writeString(g.topic).writeInt32(g.count).writeInt32(-1), // assignments: the broker's choice
            ),
          )
          .writeInt32(timeoutMs)
          .writeInt8(0), // validate_only
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readInt32(); // throttle_time_ms
        return d.readArray((t) => ({
          topic: t.readString() ?? "",
          errorCode: t.readInt16(),
          errorMessage: t.readString(),
        }));
      },
      // Per-topic errors are the admin's to judge.
      parse: async (decoded) => decoded,
    },
  };
}
