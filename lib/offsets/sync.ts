/**
 * Consumer-group offset sync: the selected groups' committed source offsets, translated exactly
 * (translate.ts), committed on the target so that a group switched to the target starts at the
 * copy of the first record it had not consumed.
 *
 * Two rules keep it from hurting anyone:
 *  - never for a group with active members on the target: their commits are the truth there.
 *    The check is a describe first (DescribeGroups for classic groups, ConsumerGroupDescribe for
 *    KIP-848 ones: lib/kafka/admin/group-describe.ts), judged by hasLiveMembers; a member joining
 *    between it and the commit makes the coordinator refuse the commit (GROUP_NOT_EMPTY: a commit
 *    with no generation is refused for a group that has members, in both protocols), which is
 *    reported the same way;
 *  - never backwards: a target offset at or past the translation stays (the group may have read
 *    the target already), unless `force`.
 */
import { partitionKey } from "../core/model.js";
import type { GroupAdmin, GroupDescription, Lease, LeaseStore, Logger } from "../core/ports.js";
import { describeError, isReplicatorError } from "../errors.js";
import { hasLiveMembers } from "./group-liveness.js";
import { type GroupOffsetsDeps, groupOffsets, type PartitionOffsetsRow } from "./group-offsets.js";
import type { GroupSelector } from "./group-selection.js";

export type GroupSyncStatus = "synced" | "up-to-date" | "active" | "no-offsets" | "failed";

export interface GroupSyncResult {
  readonly groupId: string;
  readonly status: GroupSyncStatus;
  /** Members of the group on the target when it was looked at. */
  readonly members: number;
  /** The partitions committed on the target (or that would be, with `dryRun`). */
  readonly committed: readonly PartitionOffsetsRow[];
  readonly rows: readonly PartitionOffsetsRow[];
  /** Records of the group's partitions not yet copied (the RPO if the source failed now). */
  readonly notCopied: number;
  readonly error?: string;
}

export interface SyncOptions {
  /** Commit the translation even where it is behind the target's committed offset. */
  readonly force?: boolean;
  /** Compute and report, commit nothing. */
  readonly dryRun?: boolean;
  /** The alias written into each commit's metadata, so an operator sees where it came from. */
  readonly sourceAlias: string;
}

/** One group: translate, look at the target group, commit what moves forward. */
export async function syncGroup(
  deps: GroupOffsetsDeps,
  groupId: string,
  leases: ReadonlyMap<string, Lease>,
  options: SyncOptions,
): Promise<GroupSyncResult> {
  const onTarget = await describedOnTarget(deps.targetGroups, groupId);
  const rows = await groupOffsets(deps, groupId, leases);
  const notCopied = rows.reduce((sum, r) => sum + r.notCopied, 0);
  const base = { groupId, members: onTarget.members, rows, notCopied };
  if (rows.length === 0) return { ...base, status: "no-offsets", committed: [] };
  const moves = rows.filter((r) => movesForward(r, options.force ?? false));
  if (hasLiveMembers(onTarget)) return { ...base, status: "active", committed: [] };
  if (moves.length === 0) return { ...base, status: "up-to-date", committed: [] };
  if (options.dryRun !== true) {
    try {
      await deps.targetGroups.commitOffsets(
        groupId,
        moves.map((r) => ({
          topic: r.targetTopic,
          partition: r.partition,
          offset: r.translation?.targetOffset ?? 0,
          metadata: `kafka-mirror ${options.sourceAlias} ${r.topic}/${r.partition}@${r.sourceCommitted}`,
        })),
      );
    } catch (error) {
      if (!isGroupNotEmpty(error)) throw error;
      return { ...base, status: "active", members: Math.max(1, onTarget.members), committed: [] };
    }
  }
  return { ...base, status: "synced", committed: moves };
}

/** Whether the row's translation is to be committed: forward only, unless forced. */
function movesForward(row: PartitionOffsetsRow, force: boolean): boolean {
  const to = row.translation?.targetOffset;
  if (to === undefined) return false;
  if (row.targetCommitted === null) return true;
  return force ? to !== row.targetCommitted : to > row.targetCommitted;
}

async function describedOnTarget(groups: GroupAdmin, groupId: string): Promise<GroupDescription> {
  const [described] = await groups.describeGroups([groupId]);
  return described ?? { groupId, state: "Dead", members: 0, type: "classic" };
}

export function isGroupNotEmpty(error: unknown): boolean {
  return isReplicatorError(error, "GROUP_NOT_EMPTY");
}

export interface SyncReport {
  readonly groups: readonly GroupSyncResult[];
  readonly synced: number;
  readonly failed: number;
  readonly active: number;
  /** The largest `notCopied` of any group: the worst RPO. */
  readonly maxNotCopied: number;
}

export interface SyncAllDeps extends GroupOffsetsDeps {
  readonly leases: Pick<LeaseStore, "list">;
  readonly selector: GroupSelector;
  readonly logger: Logger;
}

/**
 * Every selected group of the source, one after the other; a group that fails is reported and
 * the others go on (one group's broken partition must not stop the sync of every other).
 */
export async function syncGroups(deps: SyncAllDeps, options: SyncOptions): Promise<SyncReport> {
  const listed = await deps.sourceGroups.listGroups();
  const ids = [...new Set(listed.map((g) => g.groupId))].filter((id) => deps.selector.isSelected(id)).sort();
  if (ids.length === 0) return { groups: [], synced: 0, failed: 0, active: 0, maxNotCopied: 0 };
  const leases = new Map((await deps.leases.list()).map((l) => [partitionKey(l), l]));
  const groups: GroupSyncResult[] = [];
  for (const groupId of ids) {
    try {
      groups.push(await syncGroup(deps, groupId, leases, options));
    } catch (error) {
      deps.logger.error("group offset sync failed", { groupId, ...describeError(error) });
      const message = String(describeError(error).error);
      groups.push({
        groupId,
        status: "failed",
        members: 0,
        committed: [],
        rows: [],
        notCopied: 0,
        error: message,
      });
    }
  }
  const count = (status: GroupSyncStatus): number => groups.filter((g) => g.status === status).length;
  return {
    groups,
    synced: count("synced") + count("up-to-date"),
    failed: count("failed"),
    active: count("active"),
    maxNotCopied: Math.max(0, ...groups.map((g) => g.notCopied)),
  };
}
