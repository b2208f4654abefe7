/**
 * Every condition the lease store (store.ts, coordination.ts) writes under, composed from the
 * named pieces of model.ts, with the race each one prevents. Both backends apply these same
 * conditions (the conformance suite runs each on both), so a write is refused or allowed alike.
 */
import {
  allOf,
  type Condition,
  checkpointAt,
  checkpointBelow,
  equals,
  type Holding,
  handoffRequestedBy,
  heldBy,
  itemAbsent,
  type Lease,
  noHandoffRequested,
  unchangedSince,
  unexpiredAt,
} from "./model.js";

/** Whether a checkpoint of `nextOffset` moves `held`'s checkpoint forward (or sets the first). */
export function checkpointAdvances(held: Lease, nextOffset: number): boolean {
  return held.checkpoint === null || nextOffset > held.checkpoint;
}

/**
 * The conditions of each write, by LeaseStore operation. In the timelines A, B and C are workers.
 */
export const LeaseConditions = {
  /**
   * ensure: put only if absent. Timeline it prevents: worker A has held the lease and
   * checkpointed offset 5000 when worker B (cold start, same partition list) runs ensure; a plain
   * put would replace A's item with a free one, dropping owner, counter and checkpoint, and the
   * partition would restart from its policy start offset while A keeps copying.
   */
  create: (): Condition => itemAbsent,

  /**
   * claim: succeeds only if the item is exactly as the claimer saw it. Timelines it prevents:
   *   t0  A and B both list: lease free (or expired), counter 7
   *   t1  A claims: condition holds, owner A, counter 8
   *   t2  B claims: without a condition B would overwrite A, and both would copy the partition
   *       (A believing its counter 8 is current). With it, counter 8 != 7 and B gets null.
   * And the late renewal, which owner and counter alone do not catch (renew keeps both):
   *   t0  A holds counter 8, expiry E1; A sends a renewal that is slow to arrive
   *   t1  B lists after E1: the lease looks expired
   *   t2  A's renewal lands: expiry E2, and A, told so, keeps writing until E2
   *   t3  B claims: owner and counter are as B saw them, so B would hold it too, and both
   *       would write. The expiry B saw (E1) is no longer the item's (E2): B gets null.
   * The counter check also fails on a missing item, so a claim never creates a lease.
   */
  claim: (observed: Lease): Condition => unchangedSince(observed),

  /**
   * renew must not resurrect a lease someone else took. Timeline it prevents:
   *   t0  A holds counter 8 and stalls (GC pause, slow network) past expiresAt
   *   t1  B claims the expired lease: owner B, counter 9
   *   t2  A wakes and renews: unconditionally it would push B's expiry as if A still held it,
   *       or (writing owner) take it back behind B's back. The counter check refuses A.
   * Like the KCL, an expired lease that nobody took yet may still be renewed by its holder:
   * nobody else has acted on it, and a claimer that saw it expired is conditional on the
   * expiry it saw, which this renewal changes (see claim).
   */
  renew: (held: Holding): Condition => heldBy(held),

  /**
   * checkpoint: progress is recorded only by the current holder, before its lease runs out.
   *   t0  A holds counter 8, copies 100..199; its checkpoint request is delayed (GC, network)
   *   t1  A's lease expires; B claims it (counter 9) and resumes from checkpoint 100
   *   t2  B copies 100..149 and checkpoints 150
   *   t3  A's checkpoint 200 arrives: unconditionally, the item would mix two writers' progress,
   *       and B's next checkpoint (180) would rewind it or be refused; if A is a zombie whose
   *       writes the target fenced, 150..199 would be recorded as copied when they were not.
   * The fence refuses A at t3; the expiry refuses it already between t1 and B's claim, because
   * once expired anyone may be reading the stored checkpoint to resume. `now` is the caller's
   * clock, so a holder whose clock runs late gets a little grace; the counter still fences it
   * the moment anyone claims.
   * The checkpoint bound refuses a move backwards: a late duplicate of an older write (an SDK
   * retry whose first attempt landed after a newer one) would otherwise rewind the partition
   * and make the next holder copy records the target already has. A checkpoint that stays put
   * must find it stored as it is.
   */
  checkpoint: (held: Lease & Holding, nextOffset: number, now: number): Condition =>
    allOf(
      heldBy(held),
      unexpiredAt(now),
      checkpointAdvances(held, nextOffset) ? checkpointBelow(nextOffset) : checkpointAt(nextOffset),
    ),

  /**
   * resetCheckpoint moves the checkpoint where the diverged source log must be read from, which
   * checkpoint refuses on purpose. Timeline it is fenced against:
   *   t0  A holds counter 8 at checkpoint 500, finds the topic re-created, decides to reset to 0
   *   t1  A stalls (GC); its lease expires; B claims (counter 9), makes the same finding, resets
   *       to 0 and copies 0..199, checkpoint 200
   *   t2  A's reset lands: unconditionally it would rewind B to 0 and 0..199 would be copied twice
   * The fence and the expiry refuse A at t2, as for checkpoint; the stored checkpoint must
   * still be `from`, the one the reset was decided on, which refuses a late duplicate of an
   * older write of our own.
   */
  resetCheckpoint: (held: Holding, from: number, now: number): Condition =>
    allOf(heldBy(held), unexpiredAt(now), checkpointAt(from)),

  /**
   * release: only the holder may free the lease. Timeline it prevents:
   *   t0  A holds counter 8, stalls past expiry; B claims (counter 9)
   *   t1  A shuts down and releases: unconditionally it would free B's lease, and a third
   *       worker C would claim and copy the partition alongside B.
   * The counter is not bumped: the next claim bumps it, and a stale holder's owner check
   * already fails against the absent owner.
   */
  release: (held: Holding): Condition => heldBy(held),

  /**
   * requestHandoff: the request is only a flag; ownership changes later by the holder's release
   * and an ordinary claim, both fenced by the counter. The condition makes sure the flag lands
   * on the holding we judged overloaded. Timeline it prevents:
   *   t0  B lists: A holds the lease, counter 8, A has too many leases
   *   t1  A releases; C claims (counter 9)
   *   t2  B's request would land on C, who may hold only its fair share, and C would give the
   *       lease up for nothing. With the fence it lands only on A's term.
   * noHandoffRequested keeps two requesters from overwriting each other's request, so one
   * holder is asked once, not once per newcomer.
   */
  requestHandoff: (observed: Holding): Condition => allOf(heldBy(observed), noHandoffRequested),

  /**
   * handOver: ownership moves from holder to asker in one conditional write. Timeline it prevents:
   *   t0  A holds counter 8, B asked for it; A finishes its batch and checkpoints
   *   t1  A's lease expires while A is slow; C claims it (counter 9)
   *   t2  A hands over: unconditionally B and C would both copy the partition.
   * The fence refuses A at t2. The new counter fences A's later writes, and
   * handoffRequestedBy makes sure the lease goes to the worker that asked, not a stale asker.
   */
  handOver: (held: Holding, to: string): Condition => allOf(heldBy(held), handoffRequestedBy(to)),

  /**
   * withdrawHandoff: the asker's run ends before the lease came. Timeline it prevents:
   *   t0  B asks A for the lease; B's run reaches its deadline and winds down
   *   t1  A reads B's heartbeat (still live: B writes its last one after its pumps stop)
   *   t2  A hands over: B, gone, holds the lease and nobody copies the partition until it expires.
   * With the request withdrawn before t2, A's handOver is refused (handoffRequestedBy) and A
   * releases instead. heldBy: only the holding B asked; handed over meanwhile, the lease is B's
   * and B releases it.
   */
  withdrawHandoff: (observed: Holding, requester: string): Condition =>
    allOf(heldBy(observed), handoffRequestedBy(requester)),
} as const;

/**
 * The conditions of the protocol's own items (coordination.ts). None of these writes
 * decides ownership or progress, which only lease items do; they keep the protocol's bookkeeping
 * from being corrupted by a stale reader.
 */
export const CoordinationConditions = {
  /**
   * assign: only onto the worker's existing item. Timeline it prevents:
   *   t0  the leader scans: worker W's item is there (expired long ago)
   *   t1  another leader round deletes W's item (removeWorker)
   *   t2  the first leader writes W's assignment: unconditionally an item with an assignment
   *       and no heartbeat would appear, which every later scan would have to skip.
   */
  assign: (workerId: string): Condition => equals("workerId", workerId),

  /**
   * removeWorker: only the dead item the leader saw. Timeline it prevents:
   *   t0  the leader scans: W's heartbeat expired (W was slow, not dead)
   *   t1  W heartbeats: expiresAt moves on
   *   t2  the leader deletes W's item: W would lose its assignment and look dead to the next
   *       leader. The expiry the leader saw is no longer the item's: refused.
   */
  removeWorker: (observedExpiresAt: number): Condition => equals("expiresAt", observedExpiresAt),

  /**
   * claimLeader: taken or renewed only as the claimer read it (or absent). Timeline it prevents:
   *   t0  A and B both read the leader item expired, counter 7
   *   t1  A takes it: counter 8
   *   t2  B takes it: unconditionally both would lead (harmless for safety, since assignments
   *       decide nothing, but they would publish conflicting assignments every round). With the
   *       condition B is refused, and so is a renewal by a leader whose item someone took.
   */
  claimLeader: (observed: { owner: string | null; counter: number; expiresAt: number } | null): Condition =>
    observed === null ? itemAbsent : unchangedSince(observed),
} as const;
