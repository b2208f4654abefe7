/**
 * The lease store on a DynamoDB table: the one LeaseStore of the core (lib/core/lease/store.ts)
 * over the DynamoDB table port (lease-table-port.ts). No lease rule lives here; this only spares
 * the callers that always want DynamoDB from wiring the two.
 */
import { TableLeaseStore, type TableLeaseStoreOptions } from "../core/lease/store.js";
import { DynamoDbLeaseTable, type DynamoDbLeaseTableOptions } from "./lease-table-port.js";

export interface DynamoDbLeaseStoreOptions
  extends DynamoDbLeaseTableOptions,
    Omit<TableLeaseStoreOptions, "table"> {}

export class DynamoDbLeaseStore extends TableLeaseStore {
  constructor(options: DynamoDbLeaseStoreOptions) {
    super({ ...options, table: new DynamoDbLeaseTable(options) });
  }
}
