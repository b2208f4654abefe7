/**
 * The lease protocol (README "Lease protocol"): who holds which partition, fenced by a counter,
 * and the bookkeeping items a leader assigns with. The protocol is written once, over a narrow
 * table port, so its backends only store items and apply conditions they are given:
 *
 *   model.ts         the items (Lease, WorkerRecord, LeaderLease), the LeaseStore port, and
 *                    conditions as data with their named pieces (heldBy, unexpiredAt, ...)
 *   table.ts         the LeaseTable port: get, existing, put, update, delete, scan
 *   conditions.ts    the condition of every write, and the race each one prevents
 *   store.ts         TableLeaseStore, the one LeaseStore: lease writes and loss classification
 *   coordination.ts  heartbeats, assignments and the leader item
 *   reader.ts        whole-table reads that skip (and report) items they cannot read
 *   items.ts         what each kind of item must hold, and how it reads as a lease
 *   checkpoint.ts    what a checkpoint and a reset write (target position, source log, offset map)
 *   loss.ts, arguments.ts   what a refusal means; the argument checks
 *   memory-table.ts  the in-memory backend (unit tests, `scale`, `run --lease-store memory`)
 * The DynamoDB backend is lib/dynamodb/lease-table-port.ts. Nothing here imports a library.
 */

export { MemoryLeaseTable } from "./memory-table.js";
export { TableLeaseStore, type TableLeaseStoreOptions } from "./store.js";
export type { LeaseTable } from "./table.js";
