/**
 * A LeaseStore wrapper that counts every call and what DynamoDB would bill for it, by item
 * size: a consistent GetItem 1 read unit per 4 KB, an eventually consistent one 0.5, a Scan the
 * same per 4 KB of items read; a write 1 write unit per 1 KB of the larger of the item before
 * and after (a refused conditional write is billed too). Sizes are estimated the way DynamoDB
 * counts them: attribute names plus values.
 */
import type { Lease, LeaseStore, WorkerRecord } from "../../lib/core/ports.js";

export interface Units {
  reads: number;
  writes: number;
  calls: number;
}

const LEASE_NAMES = "leaseKeytopicpartitionownercounterexpiresAtcheckpointlastProgressAtupdatedAt".length;
const WORKER_NAMES = "leaseKeyworkerIdslotstartedAtdrainingdeadlineexpiresAtassignmentupdatedAt".length;

export function leaseBytes(l: Lease): number {
  // Numbers are ~ digits/2 + 1 bytes; strings their length.
  const key = l.topic.length + 1 + String(l.partition).length;
  return LEASE_NAMES + 2 * key + (l.owner?.length ?? 0) + (l.handoffTo?.length ?? 0) + 6 * 8;
}

export function workerBytes(w: Pick<WorkerRecord, "workerId" | "slot" | "assignment">): number {
  const assignment = (w.assignment ?? []).reduce((n, k) => n + k.length + 1, 3);
  return WORKER_NAMES + 2 * (w.workerId.length + 8) + w.slot.length + 4 * 8 + 1 + assignment;
}

const readUnits = (bytes: number, consistent: boolean) => Math.ceil(bytes / 4096) * (consistent ? 1 : 0.5);
const writeUnits = (bytes: number) => Math.ceil(bytes / 1024);

export class CountingStore {
  readonly units: Units = { reads: 0, writes: 0, calls: 0 };
  readonly byOp = new Map<string, number>();
  /** Last assignment size per worker, for the heartbeat's item size. */
  readonly #assigned = new Map<string, readonly string[]>();

  constructor(readonly inner: LeaseStore) {}

  #count(op: string, reads: number, writes: number): void {
    this.units.reads += reads;
    this.units.writes += writes;
    this.units.calls++;
    this.byOp.set(op, (this.byOp.get(op) ?? 0) + 1);
  }

  snapshot(): Units {
    return { ...this.units };
  }

  store(): LeaseStore {
    const s = this.inner;
    const leaseWrite = <T>(op: string, l: Lease, call: () => Promise<T>): Promise<T> => {
      this.#count(op, 0, writeUnits(leaseBytes(l)));
      return call();
    };
    return {
      ensure: (p) => s.ensure(p),
      list: async () => {
        const all = await s.list();
        this.#count(
          "list",
          readUnits(
            all.reduce((n, l) => n + leaseBytes(l), 0),
            true,
          ),
          0,
        );
        return all;
      },
      lease: async (tp) => {
        const l = await s.lease(tp);
        this.#count("lease", readUnits(l === null ? 1 : leaseBytes(l), true), 0);
        return l;
      },
      scan: async () => {
        const snap = await s.scan();
        const bytes =
          snap.leases.reduce((n, l) => n + leaseBytes(l), 0) +
          snap.workers.reduce((n, w) => n + workerBytes(w), 0);
        // Billed per page of up to 1 MB, rounded up per 4 KB of the page: close to bytes / 4 KB.
        this.#count("scan", readUnits(bytes, false), 0);
        return snap;
      },
      heartbeat: async (beat, options) => {
        const w = await s.heartbeat(beat, options);
        this.#count("heartbeat", 0, writeUnits(workerBytes(w)));
        return w;
      },
      assign: async (id, keys) => {
        this.#assigned.set(id, keys);
        this.#count("assign", 0, writeUnits(workerBytes({ workerId: id, slot: id, assignment: keys })));
        return s.assign(id, keys);
      },
      removeWorker: (w) => {
        this.#count("removeWorker", 0, writeUnits(workerBytes(w)));
        return s.removeWorker(w);
      },
      worker: (id, options) => {
        const keys = this.#assigned.get(id) ?? [];
        const bytes = workerBytes({ workerId: id, slot: id, assignment: keys });
        this.#count("worker", readUnits(bytes, options?.consistent ?? false), 0);
        return s.worker(id, options);
      },
      leader: () => {
        this.#count("leader", 0.5, 0);
        return s.leader();
      },
      claimLeader: (o, owner, e) => {
        this.#count("claimLeader", 0, 1);
        return s.claimLeader(o, owner, e);
      },
      claim: (o, owner, e) => leaseWrite("claim", o, () => s.claim(o, owner, e)),
      renew: (h, e) => leaseWrite("renew", h, () => s.renew(h, e)),
      checkpoint: (h, n, now, t, src, ids) =>
        leaseWrite("checkpoint", h, () => s.checkpoint(h, n, now, t, src, ids)),
      resetCheckpoint: (h, n, now, r, p) =>
        leaseWrite("resetCheckpoint", h, () => s.resetCheckpoint(h, n, now, r, p)),
      release: (h) => leaseWrite("release", h, () => s.release(h)),
      requestHandoff: (o, r) => leaseWrite("requestHandoff", o, () => s.requestHandoff(o, r)),
      withdrawHandoff: (o, r) => leaseWrite("withdrawHandoff", o, () => s.withdrawHandoff(o, r)),
      handOver: (h, e) => leaseWrite("handOver", h, () => s.handOver(h, e)),
    };
  }
}
