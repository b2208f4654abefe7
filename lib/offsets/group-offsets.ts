/**
 * One consumer group's offsets on both sides, partition by partition: what it committed on the
 * source, where that translates to in the target (translate.ts), what it has committed on the
 * target, and how much of the partition is not yet copied. What `offsets`, `failover` and the
 * sync all start from.
 */

import { forEachLimited } from "../core/lease/for-each-limited.js";
import { leaseMap } from "../core/lease/offset-map.js";
import { partitionKey } from "../core/model.js";
import type { ClusterAdmin, GroupAdmin, Lease, TopicMapping } from "../core/ports.js";
import { describeError, isReplicatorError } from "../errors.js";
import { type TranslateDeps, type Translation, translateOffset } from "./translate.js";

export interface GroupOffsetsDeps {
  readonly sourceGroups: GroupAdmin;
  readonly targetGroups: GroupAdmin;
  /** Admin of the SOURCE cluster (log ends), retried by the caller's deadline. */
  readonly sourceAdmin: ClusterAdmin;
  /** Reader and admin of the TARGET, retried by the caller's deadline. */
  readonly translate: TranslateDeps;
  readonly mapping: TopicMapping;
}

export interface PartitionOffsetsRow {
  readonly topic: string;
  readonly partition: number;
  readonly targetTopic: string;
  /** The group's committed source offset: the next record it would read there. */
  readonly sourceCommitted: number;
  /** Null when it could not be translated (`problem` says why). */
  readonly translation: Translation | null;
  readonly problem: string | null;
  /** The group's committed offset on the target partition; null when none. */
  readonly targetCommitted: number | null;
  /** The source partition's log end. */
  readonly sourceEnd: number;
  /** Records of the source partition not yet copied (the partition's share of the RPO). */
  readonly notCopied: number;
  /** Records the group consumed on the source that are not copied yet: it is ahead of the mirror. */
  readonly aheadOfMirror: number;
}

/** Partitions translated at once; each may read a stretch of the target. */
const CONCURRENCY = 8;

/** Rows of `groupId`'s committed source offsets on selected topics, sorted by topic and partition. */
export async function groupOffsets(
  deps: GroupOffsetsDeps,
  groupId: string,
  leases: ReadonlyMap<string, Lease>,
): Promise<PartitionOffsetsRow[]> {
  const committed = (await deps.sourceGroups.fetchOffsets(groupId)).filter(
    (o) => o.offset >= 0 && deps.mapping.isSelected(o.topic),
  );
  if (committed.length === 0) return [];
  const targetTopics = [...new Set(committed.map((o) => deps.mapping.targetTopic(o.topic)))];
  const onTarget = new Map(
    (await deps.targetGroups.fetchOffsets(groupId, targetTopics))
      .filter((o) => o.offset >= 0)
      .map((o) => [partitionKey(o), o.offset]),
  );
  const ends = await sourceEnds(deps.sourceAdmin, committed);
  const rows: PartitionOffsetsRow[] = [];
  await forEachLimited(committed, CONCURRENCY, async (o) => {
    const targetTopic = deps.mapping.targetTopic(o.topic);
    const lease = leases.get(partitionKey(o));
    const { translation, problem } = await translated(deps, o, targetTopic, lease);
    const copiedTo = Math.max(lease?.checkpoint ?? 0, translation?.copiedTo ?? 0);
    const sourceEnd = ends.get(partitionKey(o)) ?? copiedTo;
    rows.push({
      topic: o.topic,
      partition: o.partition,
      targetTopic,
      sourceCommitted: o.offset,
      translation,
      problem,
      targetCommitted: onTarget.get(partitionKey({ topic: targetTopic, partition: o.partition })) ?? null,
      sourceEnd,
      notCopied: Math.max(0, sourceEnd - copiedTo),
      aheadOfMirror: translation?.nextSourceOffset === null ? Math.max(0, o.offset - copiedTo) : 0,
    });
  });
  return rows.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
}

async function translated(
  deps: GroupOffsetsDeps,
  o: { readonly topic: string; readonly partition: number; readonly offset: number },
  targetTopic: string,
  lease: Lease | undefined,
): Promise<{ translation: Translation | null; problem: string | null }> {
  try {
    const translation = await translateOffset(deps.translate, {
      source: o,
      target: { topic: targetTopic, partition: o.partition },
      map: lease === undefined ? [] : leaseMap(lease),
      sourceOffset: o.offset,
    });
    return { translation, problem: null };
  } catch (error) {
    if (!isReplicatorError(error, "OFFSETS_UNTRANSLATABLE")) throw error;
    return { translation: null, problem: String(describeError(error).error) };
  }
}

async function sourceEnds(
  admin: ClusterAdmin,
  offsets: readonly { readonly topic: string; readonly partition: number }[],
): Promise<Map<string, number>> {
  const byTopic = new Map<string, number[]>();
  for (const o of offsets) byTopic.set(o.topic, [...(byTopic.get(o.topic) ?? []), o.partition]);
  const out = new Map<string, number>();
  for (const [topic, partitions] of byTopic) {
    for (const p of await admin.listOffsets(topic, partitions)) {
      out.set(partitionKey({ topic, partition: p.partition }), p.logEndOffset);
    }
  }
  return out;
}
