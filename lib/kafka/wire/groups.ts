/**
 * The group coordinator's admin requests, hand-written because kafkajs 2.2.4's own throw on the
 * first error code (we judge each group and partition ourselves) and know no group states:
 * ListGroups v4-v5 (flexible; v4 is the first version that answers each group's state, v5 its
 * type, "classic" or "consumer" for KIP-848), DescribeGroups v0-v2 (classic groups only: Kafka
 * 4 answers a KIP-848 group as Dead with no members there; consumer-group-describe.ts describes
 * those), OffsetFetch v2-v5 (v2+: a null topic list asks for every committed partition) and
 * OffsetCommit v5-v7 (generation -1 and no member id: an admin commit). Byte layouts follow
 * Kafka's clients/src/main/resources/common/message/*.json.
 */

import { FlexReader, FlexWriter } from "./flexible.js";
import { Decoder, Encoder, type KafkajsCall } from "./kafkajs-internals.js";

export const LIST_GROUPS = { apiName: "ListGroups", apiKey: 16, versions: [5, 4] } as const;
export const DESCRIBE_GROUPS = { apiName: "DescribeGroups", apiKey: 15, versions: [2, 1, 0] } as const;
export const OFFSET_FETCH = { apiName: "OffsetFetch", apiKey: 9, versions: [5, 4, 3, 2] } as const;
export const OFFSET_COMMIT = { apiName: "OffsetCommit", apiKey: 8, versions: [7, 6, 5] } as const;

export interface ListedGroup {
  readonly groupId: string;
  readonly protocolType: string;
  readonly state: string;
  /** GroupType (v5+): "classic", "consumer" (KIP-848), "share", ...; null at v4, which predates types. */
  readonly type: string | null;
}

/**
 * ListGroups v4-v5 with no states filter: every group the broker coordinates, in its state. At v5
 * only the groups of `types` (Kafka matches them case-insensitively; empty: every type).
 */
export function encodeListGroupsRequest(version: number, types: readonly string[]): Buffer {
  const w = new FlexWriter()
    .noTags() // request header v2
    .uvarint(1); // StatesFilter: empty (compact arrays store length + 1)
  if (version >= 5) {
    w.uvarint(types.length + 1); // TypesFilter
    for (const type of types) w.compactString(type);
  }
  return w.noTags().toBuffer();
}

export function decodeListGroupsResponse(
  version: number,
  payload: Buffer,
): { errorCode: number; groups: ListedGroup[] } {
  const r = new FlexReader(payload);
  r.skipTags(); // response header v1
  r.int32(); // ThrottleTimeMs
  const errorCode = r.int16();
  const groups = r.compactArray((g) => {
    const groupId = g.compactString() ?? "";
    const protocolType = g.compactString() ?? "";
    const state = g.compactString() ?? "";
    const type = version >= 5 ? (g.compactString() ?? "") : null;
    g.skipTags();
    return { groupId, protocolType, state, type };
  });
  r.skipTags();
  return { errorCode, groups };
}

export interface DescribedGroup {
  readonly errorCode: number;
  readonly groupId: string;
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: readonly {
    readonly memberId: string;
    readonly clientId: string;
    readonly clientHost: string;
  }[];
}

export function describeGroupsRequest(
  version: number,
  groupIds: readonly string[],
): KafkajsCall<DescribedGroup[]> {
  return {
    request: {
      ...requestHeader(DESCRIBE_GROUPS, version),
      encode: async () => new Encoder().writeArray([...groupIds]),
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        if (version >= 1) d.readInt32(); // throttle_time_ms
        return d.readArray((g) => ({
          errorCode: g.readInt16(),
          groupId: g.readString() ?? "",
          state: g.readString() ?? "",
          protocolType: g.readString() ?? "",
          protocol: g.readString() ?? "",
          members: g.readArray((m) => {
            const member = {
              memberId: m.readString() ?? "",
              clientId: m.readString() ?? "",
              clientHost: m.readString() ?? "",
            };
            m.readBytes(); // member_metadata
            m.readBytes(); // member_assignment
            return member;
          }),
        }));
      },
      parse: async (decoded) => decoded,
    },
  };
}

export interface FetchedOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly metadata: string | null;
  readonly errorCode: number;
}

/** `topics` null asks for every partition the group has committed. */
export function offsetFetchRequest(
  version: number,
  groupId: string,
  topics: readonly { readonly topic: string; readonly partitions: readonly number[] }[] | null,
): KafkajsCall<{ errorCode: number; offsets: FetchedOffset[] }> {
  return {
    request: {
      ...requestHeader(OFFSET_FETCH, version),
      encode: async () => {
        const e = new Encoder().writeString(groupId);
        if (topics === null) return e.writeInt32(-1);
        return e.writeArray(
          topics.map((t) => new Encoder().writeString(t.topic).writeArray([...t.partitions])),
        );
      },
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        if (version >= 3) d.readInt32(); // throttle_time_ms
        const offsets = d
          .readArray((t) => {
            const topic = t.readString() ?? "";
            return t.readArray((p) => {
              const partition = p.readInt32();
              const offset = Number(p.readInt64());
              if (version >= 5) p.readInt32(); // committed_leader_epoch
              return { topic, partition, offset, metadata: p.readString(), errorCode: p.readInt16() };
            });
          })
          .flat();
        return { errorCode: d.readInt16(), offsets };
      },
      parse: async (decoded) => decoded,
    },
  };
}

export interface OffsetToCommit {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly metadata?: string;
}

export interface CommitAnswer {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
}

/** An admin commit: generation -1, empty member id, no group instance id. */
export function offsetCommitRequest(
  version: number,
  groupId: string,
  offsets: readonly OffsetToCommit[],
): KafkajsCall<CommitAnswer[]> {
  const byTopic = new Map<string, OffsetToCommit[]>();
  for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o]);
  return {
    request: {
      ...requestHeader(OFFSET_COMMIT, version),
      encode: async () => {
        const e = new Encoder().writeString(groupId).writeInt32(-1).writeString("");
        if (version >= 7) e.writeString(null); // group_instance_id
        return e.writeArray(
          [...byTopic].map(([topic, parts]) =>
            new Encoder().writeString(topic).writeArray(
              parts.map((p) => {
                const pe = new Encoder().writeInt32(p.partition).writeInt64(String(p.offset));
                if (version >= 6) pe.writeInt32(-1); // committed_leader_epoch: unknown
                return pe.writeString(p.metadata ?? "");
              }),
            ),
          ),
        );
      },
    },
    response: {
      decode: async (payload) => {
        const d = new Decoder(payload);
        d.readInt32(); // throttle_time_ms (v3+)
        return d
          .readArray((t) => {
            const topic = t.readString() ?? "";
            return t.readArray((p) => ({ topic, partition: p.readInt32(), errorCode: p.readInt16() }));
          })
          .flat();
      },
      parse: async (decoded) => decoded,
    },
  };
}

function requestHeader(api: { readonly apiName: string; readonly apiKey: number }, version: number) {
  return { apiKey: api.apiKey, apiVersion: version, apiName: api.apiName };
}
