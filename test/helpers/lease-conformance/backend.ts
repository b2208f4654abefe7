/**
 * What the lease store conformance suite needs of a backend, and the fixture every case builds
 * on: a fresh table behind a counting wrapper, and the one LeaseStore (lib/core/lease/store.ts)
 * over it. Cases reach the table only through the port, so each runs unchanged on every backend.
 */
import assert from "node:assert/strict";
import { TableLeaseStore } from "../../../lib/core/lease/store.js";
import type { LeaseTable } from "../../../lib/core/lease/table.js";
import type { Lease } from "../../../lib/core/ports.js";
import { type ErrorCode, isReplicatorError } from "../../../lib/errors.js";
import { CapturingLogger, CapturingMetrics } from "../fake-observability.js";

export interface ConformanceBackend {
  /** A fresh, empty table, shared with no other case. */
  table(): Promise<LeaseTable>;
  /** Requests the backend itself has served so far (DynamoDB: SDK commands sent). */
  requests(): number;
}

/** Port calls by method, counted as they are made. */
export type PortCalls = Record<keyof Omit<LeaseTable, "name">, number>;

/** `table` with every port call counted in `calls`; `before` runs ahead of each, when set. */
export function counted(table: LeaseTable): {
  table: LeaseTable;
  calls: PortCalls;
  before: { hook?: (method: keyof PortCalls) => Promise<void> };
} {
  const calls: PortCalls = { get: 0, existing: 0, put: 0, update: 0, delete: 0, scan: 0 };
  const before: { hook?: (method: keyof PortCalls) => Promise<void> } = {};
  const call = async <T>(method: keyof PortCalls, run: () => Promise<T>): Promise<T> => {
    calls[method]++;
    await before.hook?.(method);
    return run();
  };
  return {
    calls,
    before,
    table: {
      name: table.name,
      get: (...a) => call("get", () => table.get(...a)),
      existing: (...a) => call("existing", () => table.existing(...a)),
      put: (...a) => call("put", () => table.put(...a)),
      update: (...a) => call("update", () => table.update(...a)),
      delete: (...a) => call("delete", () => table.delete(...a)),
      scan: (...a) => call("scan", () => table.scan(...a)),
    },
  };
}

export interface Fixture {
  /** The fresh table, uncounted: for setting items up as another writer would. */
  readonly raw: LeaseTable;
  readonly table: LeaseTable;
  readonly calls: PortCalls;
  readonly store: TableLeaseStore;
  readonly logger: CapturingLogger;
  readonly metrics: CapturingMetrics;
  /** Another store on the same table (another worker). */
  another(): TableLeaseStore;
}

export async function fixture(backend: ConformanceBackend): Promise<Fixture> {
  const raw = await backend.table();
  const { table, calls } = counted(raw);
  const logger = new CapturingLogger();
  const metrics = new CapturingMetrics();
  return {
    raw,
    table,
    calls,
    store: new TableLeaseStore({ table, logger, metrics }),
    logger,
    metrics,
    another: () => new TableLeaseStore({ table: raw }),
  };
}

export const MINUTE = 60_000;

export function assertCode(code: ErrorCode, reason?: string) {
  return (error: unknown): boolean => {
    assert.ok(isReplicatorError(error, code), `expected ${code}, got ${String(error)}`);
    if (reason !== undefined) assert.equal(error.details.reason, reason);
    return true;
  };
}

export async function ensureOne(store: TableLeaseStore, topic = "orders", partition = 0): Promise<Lease> {
  await store.ensure([{ topic, partition }]);
  const lease = (await store.list()).find((l) => l.topic === topic && l.partition === partition);
  assert.ok(lease, "ensure created the lease");
  return lease;
}

export async function claimed(
  store: TableLeaseStore,
  observed: Lease,
  owner: string,
  expiresAt: number,
): Promise<Lease> {
  const lease = await store.claim(observed, owner, expiresAt);
  assert.ok(lease, `${owner} claimed ${observed.topic}:${observed.partition}`);
  return lease;
}
