/**
 * The lease table the CLI works with. Either the embedded store in the state directory (the
 * default: the same lease store the functions use, backed by a local DynamoDB-compatible
 * server), the real DynamoDB table `leases.table` (`--lease-store dynamodb`), reached with the
 * SDK's usual settings: AWS_REGION, credentials, and AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local,
 * or a table in this process's memory (`--lease-store memory`, `run` only: nothing is shared
 * with another process or kept after this one). The CLI never creates a real table (the CDK
 * stack owns it); it checks that it fits.
 */
import { leaseRequestTimeoutMs, type MirrorConfig } from "../config/schema.js";
import type { LeaseStore, Logger } from "../core/ports.js";
import { createDynamoDbClient } from "../dynamodb/client.js";
import { createEmbeddedLeaseClient } from "../dynamodb/embedded/client.js";
import { createLeaseTable, describeLeaseTable } from "../dynamodb/lease-table.js";
import { createLeaseStore, type LeaseBackend, memoryLeaseBackend } from "../replicator.js";

export const LEASE_STORES = ["embedded", "dynamodb", "memory"] as const;
export type LeaseStoreKind = (typeof LEASE_STORES)[number];

export function isLeaseStoreKind(value: string): value is LeaseStoreKind {
  return (LEASE_STORES as readonly string[]).includes(value);
}

/**
 * The commands that read leases other processes wrote (owners, checkpoints). A memory table is
 * new and empty in every process, so with it they would report nothing as if it were the truth;
 * they refuse it instead. `verify` and `plan` never open the lease table.
 */
const READS_OTHERS_LEASES: ReadonlySet<string> = new Set(["status", "offsets", "failover"]);

/** Whether `command` can work with leases kept in `kind`: memory leases exist only inside one `run`. */
export function leaseStoreServes(kind: LeaseStoreKind, command: string): boolean {
  return kind !== "memory" || !READS_OTHERS_LEASES.has(command);
}

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
  if (kind === "memory") {
    const backend = memoryLeaseBackend();
    return {
      backend,
      store: createLeaseStore(config, backend, { logger }),
      location: "this process's memory (gone when it ends)",
      close: () => {},
    };
  }
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
