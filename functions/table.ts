/**
 * The replicator's functions, declared once: each one's handler file, timeout, schedule and
 * grants. The stack (infra/kafka-replicator.ts, worker-schedules.ts) builds every function, rule
 * and grant from this table, and the runtime refuses a schedule's event of another kind; a new
 * scheduled function is an entry here plus its handler file (`scheduledFunction(name, connect,
 * invoke)`, runtime.ts).
 */
import { replicateTimeoutSeconds } from "./timing.js";

export interface FunctionSpec {
  /** The construct id of the function (and the prefix of its role's and log group's). */
  readonly id: string;
  /** The description the function carries in Lambda. */
  readonly description: string;
  /** Its timeout: fixed, or (per tick) in seconds for a replication tick of that many minutes. */
  readonly timeout: { readonly seconds: number } | { readonly perTick: (tickMinutes: number) => number };
  /**
   * When EventBridge invokes it: once per tick for each worker slot, or every minute. `kind` is
   * the event's `kind` field.
   */
  readonly schedule: { readonly kind: string; readonly every: "tick-per-slot" | "minute" };
  /** What it is granted: the lease table and secrets, source reads, target writes, group sync. */
  readonly grants: {
    readonly leaseTable: boolean;
    readonly secrets: boolean;
    readonly sourceRead: boolean;
    readonly targetWrite: boolean;
    readonly groupSync: boolean;
  };
}

/** Lag is measured every minute, whatever the replication tick. */
const LAG_TIMEOUT_SECONDS = 55;

export const FUNCTIONS = {
  replicate: {
    id: "Replicate",
    description:
      "kafka-mirror: copies leased source partitions to the target until shortly before its timeout",
    timeout: { perTick: replicateTimeoutSeconds },
    schedule: { kind: "replicate", every: "tick-per-slot" },
    grants: { leaseTable: true, secrets: true, sourceRead: true, targetWrite: true, groupSync: false },
  },
  lag: {
    id: "Lag",
    description: "kafka-mirror: publishes replication lag and creates lease items for new topics",
    timeout: { seconds: LAG_TIMEOUT_SECONDS },
    schedule: { kind: "lag", every: "minute" },
    grants: { leaseTable: true, secrets: true, sourceRead: true, targetWrite: false, groupSync: true },
  },
} as const satisfies Record<string, FunctionSpec>;

/** A function's name: its handler is `functions/<name>.ts`. */
export type FunctionName = keyof typeof FUNCTIONS;

export const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];

/** The functions given `grant`, in table order. */
export function functionsGranted(grant: keyof FunctionSpec["grants"]): FunctionName[] {
  return FUNCTION_NAMES.filter((name) => FUNCTIONS[name].grants[grant]);
}
