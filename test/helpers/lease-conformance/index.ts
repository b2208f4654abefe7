/**
 * The lease store's conformance suite: everything the lease protocol promises (every condition,
 * every LEASE_LOST reason, the coordination items, the checkpoint's companions, the requests each
 * operation costs), run on a backend of the table port. Every backend must pass it unchanged:
 * test/unit/core/lease/conformance.test.ts runs it on the in-memory table,
 * test/integration/dynamodb/conformance.test.ts on DynamoDB Local.
 */
import { describe } from "node:test";
import type { ConformanceBackend } from "./backend.js";
import { checkpointCases } from "./checkpoints.js";
import { conditionCases } from "./conditions.js";
import { coordinationCases } from "./coordination.js";
import { leaseCases } from "./leases.js";
import { requestCases } from "./requests.js";

export type { ConformanceBackend } from "./backend.js";

/** Registers the suite under `name`; `backend` is read inside the tests only. */
export function leaseStoreConformance(name: string, backend: ConformanceBackend): void {
  describe(`lease store conformance: ${name}`, () => {
    conditionCases(backend);
    leaseCases(backend);
    checkpointCases(backend);
    coordinationCases(backend);
    requestCases(backend);
  });
}
