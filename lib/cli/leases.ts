/**
 * The lease table the CLI works with: the embedded store in the state directory (default), the
 * same DynamoDbLeaseStore the functions use, backed by a local DynamoDB-compatible server.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { MirrorConfig } from "../config/schema.js";
import { DynamoDbLeaseStore } from "../dynamodb/lease-store.js";
import { createLeaseTable } from "../dynamodb/lease-table.js";
import { createEmbeddedLeaseClient } from "../embedded/client.js";

export const DEFAULT_STATE_DIR = ".kafka-mirror";

export interface LeaseTable {
  readonly client: DynamoDBClient;
  readonly store: DynamoDbLeaseStore;
  /** Where the leases live, for messages. */
  readonly location: string;
  close(): void;
}

export async function openLeaseTable(config: MirrorConfig, stateDir: string): Promise<LeaseTable> {
  const client = await createEmbeddedLeaseClient({ stateDir });
  try {
    await createLeaseTable(client, config.leases.table);
  } catch (error) {
    client.destroy();
    throw error;
  }
  return {
    client,
    store: new DynamoDbLeaseStore({ client, tableName: config.leases.table }),
    location: `embedded store ${stateDir}, table ${config.leases.table}`,
    close: () => client.destroy(),
  };
}
