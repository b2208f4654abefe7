/**
 * The one rule for "this group is in use on that cluster", for the sync, `failover` and
 * `offsets`: its consumers own its offsets there, so we never commit over them. The adapter
 * describes a group by its own protocol (classic or KIP-848, lib/kafka/admin/group-describe.ts); this
 * decides what the description means.
 */
import type { GroupDescription } from "../core/ports.js";

/** The states in which a coordinator holds no member: Empty, and Dead (an id it does not know). */
const MEMBERLESS_STATES: ReadonlySet<string> = new Set(["Empty", "Dead"]);

/**
 * Members, or a state that only a group with members can be in (a rebalance under way, a
 * KIP-848 group Assigning or Reconciling, a state a newer Kafka names): the coordinator would
 * refuse our commit, and its consumers' commits are the truth there.
 */
export function hasLiveMembers(group: Pick<GroupDescription, "state" | "members">): boolean {
  return group.members > 0 || !MEMBERLESS_STATES.has(group.state);
}
