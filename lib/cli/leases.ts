/**
 * The lease table the CLI works with. Either the embedded store in the state directory (the
 * default: the same lease store the functions use, backed by a local DynamoDB-compatible
 * server), or the real DynamoDB table `leases.table` (`--lease-store dynamodb`), reached with the
 * SDK's usual settings: AWS_REGION, credentials, and AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local.
 * The CLI never creates a real table (the CDK stack owns it); it checks that it fits.
 */
import { leaseRequestTimeoutMs, type MirrorConfig } from "../config/schema.js";
import type { LeaseStore, Logger } from "../core/ports.js";
import { createDynamoDbClient } from "../dynamodb/client.js";
import { createLeaseTable, describeLeaseTable } from "../dynamodb/lease-table.js";
import { createEmbeddedLeaseClient } from "../embedded/client.js";
import { createLeaseStore, type LeaseBackend } from "../replicator.js";

export const LEASE_STORES = ["embedded", "dynamodb"] as const;
export type LeaseStoreKind = (typeof LEASE_STORES)[number];

export const DEFAULT_STATE_DIR = ".kafka-mirror";

export interface LeaseTable {
  /** What a worker's lease store is built over (createReplicator). */
  readonly backend: LeaseBackend;
  readonly store: LeaseStore;
  /** Where the leases live, for messages. */
  readonly location: string;
  close(): void;
}

export async function openLeaseTable(
  config: MirrorConfig,
  stateDir: string,
  kind: LeaseStoreKind = "embedded",
  /** Told about lease table items the store skips. @default silent */
  logger?: Logger,
): Promise<LeaseTable> {
  const table = config.leases.table;
  const requestTimeoutMs = leaseRequestTimeoutMs(config.leases);
  const client =
    kind === "embedded"
      ? await createEmbeddedLeaseClient({ stateDir, requestTimeoutMs })
      : createDynamoDbClient({ requestTimeoutMs });
  try {
    if (kind === "embedded") await createLeaseTable(client, table);
    else await describeLeaseTable(client, table);
  } catch (error) {
    client.destroy();
    throw error;
  }
  const backend = { dynamodb: client };
  return {
    backend,
    store: createLeaseStore(config, backend, { logger }),
    location: kind === "embedded" ? `embedded store ${stateDir}, table ${table}` : `DynamoDB table ${table}`,
    close: () => client.destroy(),
  };
}
