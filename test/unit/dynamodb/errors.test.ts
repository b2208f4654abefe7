import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DynamoDBServiceException,
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ResourceNotFoundException,
  ThrottlingException,
} from "@aws-sdk/client-dynamodb";
import { translateDynamoDbError } from "../../../lib/dynamodb/errors.js";
import { ReplicatorError } from "../../../lib/errors.js";

const $metadata = { httpStatusCode: 400 };

describe("translateDynamoDbError", () => {
  const transient = [
    new ProvisionedThroughputExceededException({ message: "slow down", $metadata }),
    new ThrottlingException({ message: "slow down", $metadata }),
    new RequestLimitExceeded({ message: "account limit", $metadata }),
    new InternalServerError({ message: "oops", $metadata: { httpStatusCode: 500 } }),
  ];
  for (const sdkError of transient) {
    it(`makes ${sdkError.name} a retryable LEASE_STORE_UNAVAILABLE keeping the cause`, () => {
      const error = translateDynamoDbError(sdkError, "UpdateItem", "leases");

      assert.equal(error.code, "LEASE_STORE_UNAVAILABLE");
      assert.equal(error.retryable, true);
      assert.equal(error.cause, sdkError);
      assert.equal(error.details.awsError, sdkError.name);
    });
  }

  // The embedded client starts its server inside the request: a state directory it cannot use
  // must stay final, not become "could not be reached" and be retried until the deadline.
  it("passes an error the client translated already through, retryable or not", () => {
    const unusable = new ReplicatorError("STATE_DIR_UNUSABLE", "state directory /x cannot be used");

    const error = translateDynamoDbError(unusable, "Scan", "leases");

    assert.equal(error, unusable);
    assert.equal(error.retryable, false);
  });

  it("makes a network error without a service response a retryable LEASE_STORE_UNAVAILABLE", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });

    const error = translateDynamoDbError(refused, "Scan", "leases", { leaseKey: "t:0" });

    assert.equal(error.code, "LEASE_STORE_UNAVAILABLE");
    assert.equal(error.retryable, true);
    assert.deepEqual(error.details, { leaseKey: "t:0", operation: "Scan", tableName: "leases" });
  });

  it("makes a missing table LEASE_STORE_INVALID", () => {
    const error = translateDynamoDbError(
      new ResourceNotFoundException({ message: "Requested resource not found", $metadata }),
      "Scan",
      "leases",
    );

    assert.equal(error.code, "LEASE_STORE_INVALID");
    assert.equal(error.retryable, false);
    assert.match(error.message, /leases does not exist/);
  });

  it("does not retry access denied", () => {
    const error = translateDynamoDbError(
      // What the SDK builds for an error code its model does not list.
      new DynamoDBServiceException({
        name: "AccessDeniedException",
        $fault: "client",
        message: "no",
        $metadata: { httpStatusCode: 403 },
      }),
      "Scan",
      "leases",
    );

    assert.equal(error.code, "LEASE_STORE_UNAVAILABLE");
    assert.equal(error.retryable, false);
  });
});
