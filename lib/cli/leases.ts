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
import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { MirrorConfig } from "../config/schema.js";
import type { Lease, Logger } from "../core/ports.js";
import { ReplicatorError } from "../errors.js";
import { existingLeaseStore, LEASE_STORES, type LeaseStoreKind } from "../wiring.js";

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

/**
 * The state directory when `--state-dir` is not given: `.kafka-mirror/` next to the config file,
 * found through its real path (symlinks resolved), so one config finds one state from any working
 * directory. A config file that cannot be resolved is reported when it is loaded.
 */
export function defaultStateDir(configPath: string): string {
  let real: string;
  try {
    real = realpathSync(configPath);
  } catch {
    real = resolve(configPath);
  }
  return join(dirname(real), DEFAULT_STATE_DIR);
}

export interface LeaseReadOptions {
  readonly leaseStore: LeaseStoreKind;
  readonly stateDir: string;
  readonly logger?: Logger | undefined;
}

/** The leases a read-only command found, and where (for its report's last line). */
export interface LeaseState {
  readonly leases: Lease[];
  /** "lease store: <where>", the line that ends the command's text report. */
  readonly footer: string;
}

/**
 * Every lease, for a command that only reads them (status, offsets, failover). Where there is no
 * store, or a store without lease items, it stops with LEASE_STATE_MISSING rather than read the
 * absence as "nothing copied yet": from the wrong directory that would report the whole log as
 * lag and every group offset as untranslatable.
 */
export async function readLeaseState(config: MirrorConfig, options: LeaseReadOptions): Promise<LeaseState> {
  const { leaseStore: kind, stateDir, logger } = options;
  if (kind === "memory") throw new Error("readLeaseState: memory leases are refused by leaseStoreServes");
  const opened = await existingLeaseStore(config, kind, { stateDir, logger });
  let leases: Lease[] = [];
  try {
    if (opened !== null) leases = await opened.store.list();
  } finally {
    opened?.close();
  }
  if (opened === null || leases.length === 0)
    throw noLeaseState(config.leases.table, kind, stateDir, opened !== null);
  return { leases, footer: `lease store: ${opened.location}` };
}

function noLeaseState(
  table: string,
  kind: "embedded" | "dynamodb",
  stateDir: string,
  tableExists: boolean,
): ReplicatorError {
  const message =
    kind === "embedded"
      ? `no checkpoints in ${stateDir} (lease table ${table}): wrong --state-dir or table?`
      : `no checkpoints in DynamoDB table ${table}: wrong leases.table, or AWS_REGION?`;
  const where = kind === "embedded" ? { stateDir } : {};
  return new ReplicatorError("LEASE_STATE_MISSING", message, {
    details: { leaseStore: kind, table, ...where, tableExists },
  });
}
