/**
 * The lease protocol's bookkeeping writes (item layout in items.ts, conditions in conditions.ts'
 * CoordinationConditions): a worker's heartbeat, the leader's assignments, deleting long-dead
 * worker items, and the leader item. None decides ownership of a partition; that stays with the
 * lease items' fenced writes (store.ts).
 */
import { requireEpochMs, requireWorkerId } from "./arguments.js";
import { CoordinationConditions } from "./conditions.js";
import { heartbeatChanges, leaderOf, workerOf } from "./items.js";
import type { HeartbeatOptions, LeaderLease, WorkerHeartbeat, WorkerRecord } from "./model.js";
import { ChangeSet, type Item, LEADER_KEY, type LeaseTable, workerKey, writtenItem } from "./table.js";

export class CoordinationStore {
  readonly #table: LeaseTable;
  readonly #clock: { now(): number };

  constructor(table: LeaseTable, clock: { now(): number }) {
    this.#table = table;
    this.#clock = clock;
  }

  /** Unconditional: a worker's own item is written by that worker only (and the leader's assignment, apart). */
  async heartbeat(beat: WorkerHeartbeat, options: HeartbeatOptions = {}): Promise<WorkerRecord> {
    requireWorkerId("heartbeat", "workerId", beat.workerId);
    requireWorkerId("heartbeat", "slot", beat.slot);
    for (const field of ["startedAt", "deadline", "expiresAt"] as const)
      requireEpochMs("heartbeat", field, beat[field]);
    for (const [key, until] of beat.backoff ?? []) requireEpochMs("heartbeat", `backoff[${key}]`, until);
    const key = workerKey(beat.workerId);
    const changes = heartbeatChanges(beat, this.#clock.now(), options.forgetAssignment === true);
    // Unconditional, so never refused.
    const outcome = await this.#table.update(key, changes, { operation: "heartbeat" });
    return workerOf(key, writtenItem(outcome.ok ? outcome.item : undefined, key, "heartbeat"));
  }

  async assign(workerId: string, assignment: readonly string[]): Promise<boolean> {
    requireWorkerId("assign", "workerId", workerId);
    const changes = new ChangeSet().with("assignment", [...assignment]).with("updatedAt", this.#clock.now());
    const condition = CoordinationConditions.assign(workerId);
    const outcome = await this.#table.update(workerKey(workerId), changes, {
      operation: "assign",
      condition,
      returnItem: false,
    });
    return outcome.ok;
  }

  removeWorker(observed: WorkerRecord): Promise<boolean> {
    const condition = CoordinationConditions.removeWorker(observed.expiresAt);
    return this.#table.delete(workerKey(observed.workerId), { operation: "removeWorker", condition });
  }

  async worker(
    workerId: string,
    options: { readonly consistent?: boolean } = {},
  ): Promise<WorkerRecord | null> {
    requireWorkerId("worker", "workerId", workerId);
    const key = workerKey(workerId);
    const item = await this.#table.get(key, { consistent: options.consistent ?? false });
    return item === undefined ? null : workerOf(key, item);
  }

  async leader(): Promise<LeaderLease | null> {
    const item = await this.#table.get(LEADER_KEY, { consistent: false });
    return item === undefined ? null : leaderOf(item);
  }

  async claimLeader(
    observed: LeaderLease | null,
    owner: string,
    expiresAt: number,
  ): Promise<LeaderLease | null> {
    requireWorkerId("claimLeader", "owner", owner);
    requireEpochMs("claimLeader", "expiresAt", expiresAt);
    const next: LeaderLease = { owner, counter: (observed?.counter ?? 0) + 1, expiresAt };
    const values = {
      owner,
      counter: Math.max(next.counter, 1),
      expiresAt,
      updatedAt: this.#clock.now(),
    } satisfies Item;
    // A leader item nobody can read (counter -1, see leaderOf) would refuse every condition
    // forever: it is replaced outright. Leadership decides no ownership, so two workers
    // replacing it at once cost at most one round of two leaders.
    if (observed !== null && observed.counter < 0) {
      await this.#table.put(LEADER_KEY, values, { operation: "claimLeader" });
      return leaderOf(values);
    }
    const changes = new ChangeSet()
      .with("owner", values.owner)
      .with("counter", values.counter)
      .with("expiresAt", values.expiresAt)
      .with("updatedAt", values.updatedAt);
    const outcome = await this.#table.update(LEADER_KEY, changes, {
      operation: "claimLeader",
      condition: CoordinationConditions.claimLeader(observed),
    });
    return outcome.ok ? leaderOf(writtenItem(outcome.item, LEADER_KEY, "claimLeader")) : null;
  }
}
