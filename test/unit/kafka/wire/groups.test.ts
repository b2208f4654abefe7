/**
 * ListGroups v4-v5 bytes (lib/kafka/wire/groups.ts), laid out by hand from Kafka's
 * ListGroupsRequest.json / ListGroupsResponse.json: flexible from v3, StatesFilter from v4,
 * TypesFilter and GroupType from v5 (KIP-848). Against a broker: the group-admin integration
 * tests (the mock's handler, and Kafka 4.1 in group-admin-real-kafka.test.ts).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decodeListGroupsResponse, encodeListGroupsRequest } from "../../../../lib/kafka/wire/groups.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");
/** A compact string: unsigned varint length + 1 (all short here: one byte), then UTF-8. */
const cstr = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s) + 1]), Buffer.from(s)]);

describe("ListGroups v4-v5", () => {
  it("v5 asks for the given types and no states; v4 has no types filter", () => {
    assert.deepEqual(
      encodeListGroupsRequest(5, ["classic", "consumer"]),
      Buffer.concat([
        hex("00"), // request header v2: no tagged fields
        hex("01"), // StatesFilter: empty compact array (length + 1)
        hex("03"), // TypesFilter: 2 entries
        cstr("classic"),
        cstr("consumer"),
        hex("00"), // no tagged fields
      ]),
    );
    assert.deepEqual(encodeListGroupsRequest(4, ["classic"]), hex("00 01 00"));
  });

  it("decodes v5's GroupType per group, skipping tagged fields; v4 answers no type", () => {
    const group = (id: string, type: string | null, tags = hex("00")) =>
      Buffer.concat([
        cstr(id), // GroupId
        cstr(id === "offsets-only" ? "" : "consumer"), // ProtocolType
        cstr("Stable"), // GroupState (v4+)
        ...(type === null ? [] : [cstr(type)]), // GroupType (v5+)
        tags,
      ]);
    const response = (groups: Buffer[]) =>
      Buffer.concat([
        hex("00"), // response header v1: no tagged fields
        hex("00000000"), // ThrottleTimeMs
        hex("0000"), // ErrorCode
        Buffer.from([groups.length + 1]), // Groups
        ...groups,
        hex("00"),
      ]);

    const v5 = decodeListGroupsResponse(
      5,
      response([group("billing", "consumer", hex("01 05 02 abcd")), group("offsets-only", "classic")]),
    );
    const v4 = decodeListGroupsResponse(4, response([group("billing", null)]));

    assert.deepEqual(v5, {
      errorCode: 0,
      groups: [
        { groupId: "billing", protocolType: "consumer", state: "Stable", type: "consumer" },
        { groupId: "offsets-only", protocolType: "", state: "Stable", type: "classic" },
      ],
    });
    assert.deepEqual(v4.groups, [
      { groupId: "billing", protocolType: "consumer", state: "Stable", type: null },
    ]);
  });

  it("decodes a whole-request error with no groups", () => {
    assert.deepEqual(decodeListGroupsResponse(5, hex("00 00000000 000e 01 00")), {
      errorCode: 14,
      groups: [],
    });
  });
});
