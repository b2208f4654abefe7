import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decodeFetchResponse,
  encodeFetchRequest,
  fetchRequest,
  IsolationLevel,
} from "../../../../lib/kafka/wire/fetch.js";

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ""), "hex");

describe("Fetch v11 request", () => {
  it("encodes the fields in wire order", () => {
    const encoded = encodeFetchRequest({
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: 100,
      isolationLevel: IsolationLevel.READ_COMMITTED,
      topics: [{ topic: "t", partitions: [{ partition: 0, fetchOffset: 5, maxBytes: 100 }] }],
    });

    assert.deepEqual(
      encoded.buffer,
      hex(`
        ffffffff 000001f4 00000001 00000064 01 00000000 ffffffff
        00000001 0001 74
          00000001 00000000 ffffffff 0000000000000005 ffffffffffffffff 00000064
        00000000 0000`),
    );
  });

  it("carries each partition's current leader epoch after its id, -1 where none is given (KIP-320)", () => {
    const encoded = encodeFetchRequest({
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 200,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      topics: [
        {
          topic: "t",
          partitions: [
            { partition: 2, currentLeaderEpoch: 7, fetchOffset: 5, maxBytes: 100 },
            { partition: 3, fetchOffset: 6, maxBytes: 100 },
          ],
        },
      ],
    });

    assert.deepEqual(
      encoded.buffer,
      hex(`
        ffffffff 00000000 00000001 000000c8 00 00000000 ffffffff
        00000001 0001 74
          00000002
            00000002 00000007 0000000000000005 ffffffffffffffff 00000064
            00000003 ffffffff 0000000000000006 ffffffffffffffff 00000064
        00000000 0000`),
    );
  });

  it("is sent as api key 1 with the negotiated version", () => {
    const { request } = fetchRequest(11, {
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1,
      isolationLevel: 1,
      topics: [],
    });

    assert.deepEqual([request.apiKey, request.apiVersion, request.apiName], [1, 11, "Fetch"]);
  });
});

describe("Fetch v11 response", () => {
  it("keeps each partition's record set as raw bytes and reads aborted transactions", () => {
    const payload = hex(`
      00000000 0000 00000000
      00000001 0001 74
        00000002
          00000003 0000 000000000000000a 0000000000000009 0000000000000002
            00000001 0000000000000007 0000000000000004
            ffffffff
            00000003 010203
          00000004 0001 ffffffffffffffff ffffffffffffffff ffffffffffffffff
            ffffffff
            ffffffff
            ffffffff`);

    const response = decodeFetchResponse(payload);

    assert.equal(response.errorCode, 0);
    const [p3, p4] = response.topics[0]?.partitions ?? [];
    assert.deepEqual(p3, {
      partition: 3,
      errorCode: 0,
      highWatermark: 10,
      lastStableOffset: 9,
      logStartOffset: 2,
      abortedTransactions: [{ producerId: 7n, firstOffset: 4 }],
      records: Buffer.from([1, 2, 3]),
    });
    assert.deepEqual(p4, {
      partition: 4,
      errorCode: 1,
      highWatermark: -1,
      lastStableOffset: -1,
      logStartOffset: -1,
      abortedTransactions: [],
      records: Buffer.alloc(0),
    });
  });

  it("does not throw on partition errors when parsed (the reader handles them)", async () => {
    const { response } = fetchRequest(11, {
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1,
      isolationLevel: 1,
      topics: [],
    });
    const decoded = await response.decode(
      hex(
        "00000000 0000 00000000 00000001 0001 74 00000001 00000000 0006 0000000000000000 0000000000000000 0000000000000000 ffffffff ffffffff 00000000",
      ),
    );

    const parsed = await response.parse(decoded);

    assert.equal(parsed.topics[0]?.partitions[0]?.errorCode, 6);
  });
});
