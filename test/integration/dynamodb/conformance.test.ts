/**
 * The lease store conformance suite (test/helpers/lease-conformance) on DynamoDB Local: the same
 * cases the in-memory table passes, so what the core's unit tests prove on memory holds here.
 * Every request the client sends is counted, to hold the port to one request per call.
 */
import { DynamoDbLeaseTable } from "../../../lib/dynamodb/lease-table-port.js";
import { useDynamoDbLocal } from "../../helpers/dynamodb-local.js";
import { leaseStoreConformance } from "../../helpers/lease-conformance/index.js";

const db = useDynamoDbLocal();
let sent = 0;
let counting = false;

leaseStoreConformance("DynamoDB Local", {
  async table() {
    if (!counting) {
      counting = true;
      db.client.middlewareStack.add(
        (next) => async (args) => {
          sent++;
          return next(args);
        },
        { step: "initialize", name: "countRequests" },
      );
    }
    return new DynamoDbLeaseTable({ client: db.client, tableName: await db.freshLeaseTable() });
  },
  requests: () => sent,
});
