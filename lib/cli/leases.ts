/**
 * Which lease store the CLI works with (`--lease-store`, `--state-dir`). Either the embedded
 * store in the state directory (the default: the same lease store the functions use, backed by a
 * local DynamoDB-compatible server), the real DynamoDB table `leases.table` (`--lease-store
 * dynamodb`), reached with the SDK's usual settings: AWS_REGION, credentials, and
 * AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local, or a table in this process's memory
 * (`--lease-store memory`, `run` only: nothing is shared with another process or kept after this
 * one). The stores are opened by the composition module (`leaseStoreFor`, lib/wiring.ts); the CLI
 * never creates a real table (the CDK stack owns it); it checks that it fits.
 */
import { LEASE_STORES, type LeaseStoreKind } from "../wiring.js";

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
