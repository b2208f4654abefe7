/**
 * ConsumerGroupDescribe (API 69) v0-v1 bytes (lib/kafka/wire/consumer-group-describe.ts),
 * laid out by hand from Kafka's ConsumerGroupDescribeRequest.json / ConsumerGroupDescribeResponse.json
 * (flexible from v0; v1 adds Member.MemberType, KIP-1099, checked against Kafka 4.1.2's generated
 * ConsumerGroupDescribeResponseData, whose Member.write puts it after TargetAssignment). Against a
 * broker: test/integration/kafka/group-admin-real-kafka.test.ts.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isReplicatorError } from "../../../../lib/errors.js";
import {
  decodeConsumerGroupDescribeResponse,
  encodeConsumerGroupDescribeRequest,
} from "../../../../lib/kafka/wire/consumer-group-describe.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");
/** A compact string: unsigned varint length + 1 (all short here: one byte), then UTF-8. */
const cstr = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s) + 1]), Buffer.from(s)]);
const NULL_STRING = hex("00");
const TOPIC_ID = hex("0123456789abcdef0123456789abcdef");

/** An Assignment struct: one topic with `partitions`, or none. */
function assignment(partitions: readonly number[]): Buffer {
  if (partitions.length === 0) return hex("01 00"); // TopicPartitions: empty; no tagged fields
  const ints = partitions.map((p) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(p);
    return b;
  });
  return Buffer.concat([
    hex("02"), // TopicPartitions: 1 entry
    TOPIC_ID, // TopicId
    cstr("orders"), // TopicName
    Buffer.from([partitions.length + 1]), // Partitions
    ...ints,
    hex("00"), // TopicPartitions' tagged fields
    hex("00"), // Assignment's tagged fields
  ]);
}

function member(version: number, id: string, partitions: readonly number[], memberType: number): Buffer {
  return Buffer.concat([
    cstr(id), // MemberId
    NULL_STRING, // InstanceId
    NULL_STRING, // RackId
    hex("00000007"), // MemberEpoch
    cstr("group-member"), // ClientId
    cstr("/127.0.0.1"), // ClientHost
    hex("02"), // SubscribedTopicNames: 1
    cstr("orders"),
    NULL_STRING, // SubscribedTopicRegex
    assignment(partitions), // Assignment
    assignment([]), // TargetAssignment
    ...(version >= 1 ? [Buffer.from([memberType])] : []), // MemberType (v1+)
    hex("01 07 01 ff"), // tagged fields: one unknown tag (7), 1 byte, to be skipped
  ]);
}

function response(version: number): Buffer {
  const live = Buffer.concat([
    hex("0000"), // ErrorCode
    NULL_STRING, // ErrorMessage
    cstr("billing"), // GroupId
    cstr("Reconciling"), // GroupState
    hex("00000007"), // GroupEpoch
    hex("00000006"), // AssignmentEpoch
    cstr("uniform"), // AssignorName
    hex("03"), // Members: 2
    member(version, "RQvkmU7PQaOMrMl+DOTaXw", [0, 2], 1),
    member(version, "lbd3EVF2QiSM7Tb03YLzEA", [1], 0),
    hex("80000000"), // AuthorizedOperations: not asked for
    hex("00"),
  ]);
  const notFound = Buffer.concat([
    hex("0045"), // ErrorCode: GROUP_ID_NOT_FOUND (69)
    cstr("Group audit is not a consumer group."),
    cstr("audit"),
    cstr("Dead"),
    hex("ffffffff ffffffff"), // GroupEpoch, AssignmentEpoch
    cstr(""), // AssignorName
    hex("01"), // Members: none
    hex("80000000"),
    hex("00"),
  ]);
  return Buffer.concat([hex("00"), hex("00000000"), hex("03"), live, notFound, hex("00")]);
}

describe("ConsumerGroupDescribe v0-v1", () => {
  it("asks for the group ids without authorized operations, the same bytes at v0 and v1", () => {
    assert.deepEqual(
      encodeConsumerGroupDescribeRequest(["billing", "audit"]),
      Buffer.concat([
        hex("00"), // request header v2: no tagged fields
        hex("03"), // GroupIds: 2
        cstr("billing"),
        cstr("audit"),
        hex("00"), // IncludeAuthorizedOperations: false
        hex("00"), // no tagged fields
      ]),
    );
  });

  it("decodes each group's state and members (v1 with MemberType), and a group it does not know", () => {
    const [live, notFound] = decodeConsumerGroupDescribeResponse(1, response(1));

    assert.deepEqual(live, {
      errorCode: 0,
      errorMessage: null,
      groupId: "billing",
      state: "Reconciling",
      members: [
        {
          memberId: "RQvkmU7PQaOMrMl+DOTaXw",
          memberEpoch: 7,
          clientId: "group-member",
          clientHost: "/127.0.0.1",
          assignedPartitions: 2,
          memberType: 1,
        },
        {
          memberId: "lbd3EVF2QiSM7Tb03YLzEA",
          memberEpoch: 7,
          clientId: "group-member",
          clientHost: "/127.0.0.1",
          assignedPartitions: 1,
          memberType: 0,
        },
      ],
    });
    assert.deepEqual(notFound, {
      errorCode: 69,
      errorMessage: "Group audit is not a consumer group.",
      groupId: "audit",
      state: "Dead",
      members: [],
    });
  });

  it("v0 has no MemberType (reported -1)", () => {
    const [live] = decodeConsumerGroupDescribeResponse(0, response(0));

    assert.deepEqual(
      live?.members.map((m) => [m.memberId, m.assignedPartitions, m.memberType]),
      [
        ["RQvkmU7PQaOMrMl+DOTaXw", 2, -1],
        ["lbd3EVF2QiSM7Tb03YLzEA", 1, -1],
      ],
    );
  });

  it("a response cut short is a retryable malformed answer, not a silent partial one", () => {
    const whole = response(1);

    assert.throws(
      () => decodeConsumerGroupDescribeResponse(1, whole.subarray(0, whole.length - 20)),
      (error: unknown) =>
        isReplicatorError(error, "KAFKA_RETRIABLE") &&
        error.retryable &&
        /malformed flexible-version response/.test(error.message),
    );
  });
});
