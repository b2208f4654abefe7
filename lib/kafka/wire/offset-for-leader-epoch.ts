/**
 * OffsetForLeaderEpoch v2-v3 (non-flexible) for one partition: where a leader epoch ends in the
 * leader's log. A consumer uses it to find out whether the log it read was truncated after an
 * unclean leader election (KIP-320); so does source-continuity.ts.
 */
import { Decoder, Encoder, type KafkajsCall } from "./kafkajs-internals.js";

export const OFFSET_FOR_LEADER_EPOCH_API_KEY = 23;
/** v2 is all librdkafka 2.15.1's mock answers; v3 adds replica_id. */
export const OFFSET_FOR_LEADER_EPOCH_VERSIONS = [3, 2] as const;

export interface EpochEndRequest {
  readonly topic: string;
  readonly partition: number;
  /** The epoch the client believes current, to be fenced by a newer leader; -1 skips the check. */
  readonly currentLeaderEpoch: number;
  readonly leaderEpoch: number;
}

export interface EpochEndResponse {
  readonly errorCode: number;
  readonly leaderEpoch: number;
  /** -1 when the leader does not know the epoch. */
  readonly endOffset: number;
}

export function offsetForLeaderEpochRequest(
  version: number,
  request: EpochEndRequest,
): KafkajsCall<EpochEndResponse | null> {
  return {
    request: {
      apiKey: OFFSET_FOR_LEADER_EPOCH_API_KEY,
      apiVersion: version,
      apiName: "OffsetForLeaderEpoch",
      encode: async () => {
        const e = new Encoder();
        if (version >= 3) e.writeInt32(-1); // replica_id: a consumer
        return e.writeArray([
          new Encoder()
            .writeString(request.topic)
            .writeArray([
              new Encoder()
                .writeInt32(request.partition)
                .writeInt32(request.currentLeaderEpoch)
                .writeInt32(request.leaderEpoch),
            ]),
        ]);
      },
    },
    response: {
      decode: async (payload) => decodeResponse(payload, request.partition),
      // Partition errors are the reader's to judge; parse must not throw on them.
      parse: async (decoded) => decoded,
    },
  };
}

function decodeResponse(payload: Buffer, partition: number): EpochEndResponse | null {
  const d = new Decoder(payload);
  d.readInt32(); // throttle_time_ms
  const topics = d.readArray((t) => {
    t.readString();
    return t.readArray((p) => ({
      errorCode: p.readInt16(),
      partition: p.readInt32(),
      leaderEpoch: p.readInt32(),
      endOffset: Number(p.readInt64()),
    }));
  });
  const found = topics.flat().find((p) => p.partition === partition);
  return found === undefined
    ? null
    : { errorCode: found.errorCode, leaderEpoch: found.leaderEpoch, endOffset: found.endOffset };
}
