/**
 * ConsumerGroupDescribe (API 69, KIP-848), v0-v1, flexible from v0: the members of groups that
 * run the consumer rebalance protocol, which DescribeGroups cannot see (Kafka 4 answers such a
 * group as Dead with no members there, or GROUP_ID_NOT_FOUND at v6). A group of any other kind,
 * and an unknown id, comes back GROUP_ID_NOT_FOUND. v1 (KIP-1099, served by Kafka 4.1) adds each
 * member's MemberType. Byte layout: Kafka's ConsumerGroupDescribeRequest.json and
 * ConsumerGroupDescribeResponse.json (clients/src/main/resources/common/message).
 */
import { FlexReader, FlexWriter } from "./flexible.js";

export const CONSUMER_GROUP_DESCRIBE = {
  apiName: "ConsumerGroupDescribe",
  apiKey: 69,
  versions: [1, 0],
} as const;

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly clientId: string;
  readonly clientHost: string;
  /** Partitions assigned now (Assignment), over all topics. */
  readonly assignedPartitions: number;
  /** v1: 1 a KIP-848 member, 0 a classic-protocol member of an upgraded group; -1 at v0. */
  readonly memberType: number;
}

export interface ConsumerGroupDescribed {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly groupId: string;
  /** Empty, Assigning, Reconciling, Stable or Dead. */
  readonly state: string;
  readonly members: readonly ConsumerGroupMember[];
}

/** The same bytes at v0 and v1: the group ids, and no authorized operations asked for. */
export function encodeConsumerGroupDescribeRequest(groupIds: readonly string[]): Buffer {
  const w = new FlexWriter()
    .noTags() // request header v2
    .uvarint(groupIds.length + 1); // GroupIds (compact array)
  for (const id of groupIds) w.compactString(id);
  return w
    .int8(0) // IncludeAuthorizedOperations: false
    .noTags()
    .toBuffer();
}

export function decodeConsumerGroupDescribeResponse(
  version: number,
  payload: Buffer,
): ConsumerGroupDescribed[] {
  const r = new FlexReader(payload);
  r.skipTags(); // response header v1
  r.int32(); // ThrottleTimeMs
  const groups = r.compactArray((g) => {
    const errorCode = g.int16();
    const errorMessage = g.compactString();
    const groupId = g.compactString() ?? "";
    const state = g.compactString() ?? "";
    g.int32(); // GroupEpoch
    g.int32(); // AssignmentEpoch
    g.compactString(); // AssignorName
    const members = g.compactArray((m) => readMember(version, m));
    g.int32(); // AuthorizedOperations
    g.skipTags();
    return { errorCode, errorMessage, groupId, state, members };
  });
  r.skipTags();
  return groups;
}

function readMember(version: number, m: FlexReader): ConsumerGroupMember {
  const memberId = m.compactString() ?? "";
  m.compactString(); // InstanceId
  m.compactString(); // RackId
  const memberEpoch = m.int32();
  const clientId = m.compactString() ?? "";
  const clientHost = m.compactString() ?? "";
  m.compactArray((t) => t.compactString()); // SubscribedTopicNames
  m.compactString(); // SubscribedTopicRegex
  const assignedPartitions = readAssignment(m);
  readAssignment(m); // TargetAssignment
  const memberType = version >= 1 ? m.int8() : -1;
  m.skipTags();
  return { memberId, memberEpoch, clientId, clientHost, assignedPartitions, memberType };
}

/** An Assignment struct; answers how many partitions it holds. */
function readAssignment(r: FlexReader): number {
  const counts = r.compactArray((t) => {
    t.uuid(); // TopicId
    t.compactString(); // TopicName
    const partitions = t.compactArray((p) => p.int32()).length;
    t.skipTags();
    return partitions;
  });
  r.skipTags();
  return counts.reduce((sum, n) => sum + n, 0);
}
