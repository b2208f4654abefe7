/**
 * clockSkewAtLeast: what one exchange with DynamoDB proves about our clock, given that its Date
 * header is in whole seconds and the request took a while.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clockSkewAtLeast } from "../../../lib/dynamodb/clock-skew.js";

const date = Date.parse("Fri, 04 Dec 2026 22:50:10 GMT");

describe("clockSkewAtLeast", () => {
  it("is 0 while the server's second may fall within the exchange", () => {
    assert.equal(clockSkewAtLeast(date - 200, date + 50, date), 0);
    // Sent late in the server's second: its date is still that second.
    assert.equal(clockSkewAtLeast(date + 990, date + 1_010, date), 0);
    // A slow answer covers the server's whole second.
    assert.equal(clockSkewAtLeast(date - 3_000, date + 3_000, date), 0);
  });

  it("counts ahead from the end of the server's second, behind from its start", () => {
    assert.equal(clockSkewAtLeast(date + 10_400, date + 10_450, date), 9_400);
    assert.equal(clockSkewAtLeast(date - 10_450, date - 10_400, date), -10_400);
  });

  it("gives a slow exchange only what it proves", () => {
    // Sent 5 s behind, answered 1 s behind: behind by 1 s at least.
    assert.equal(clockSkewAtLeast(date - 5_000, date - 1_000, date), -1_000);
  });
});
