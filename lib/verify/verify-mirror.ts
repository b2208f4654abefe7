/**
 * `kafka-mirror verify`: every partition of every selected topic, source against target, record
 * by record or (target.copy "batches") batch by batch. Pure over our ports, so the CLI runs it on
 * real clusters and the unit tests on fakes.
 */
import type { CopyMode } from "../core/model.js";
import type { TopicSelector } from "../topics/selection.js";
import { selectTopics } from "../topics/selection.js";
import { type ClusterSide, comparePartition, type PartitionComparison } from "./compare-partition.js";

export interface TopicProblem {
  readonly source: string;
  readonly target: string;
  readonly message: string;
}

export interface VerifyReport {
  readonly partitions: PartitionComparison[];
  /** Topics that could not be compared at all (missing on the target, too few partitions). */
  readonly topicProblems: TopicProblem[];
  /** The mapping selected no source topic: why. Nothing compared is no proof of a copy. */
  readonly emptySelection: string | null;
  /** True when something was compared, every partition matched and no topic had a problem. */
  readonly ok: boolean;
}

export interface VerifyOptions {
  readonly source: ClusterSide;
  readonly target: ClusterSide;
  readonly mapping: TopicSelector;
  /** Compare from this offset on both sides instead of each log's start. */
  readonly fromOffset?: number;
  /** See CompareOptions.mirrorHeader. */
  readonly mirrorHeader?: Buffer;
  /** target.copy: how the copies were made, so how they are compared. @default "records" */
  readonly copy?: CopyMode;
  /** Called after each partition, for progress output. */
  readonly onPartition?: (comparison: PartitionComparison) => void;
  readonly signal?: AbortSignal;
}

export async function verifyMirror(options: VerifyOptions): Promise<VerifyReport> {
  const [sourceTopics, targetTopics] = await Promise.all([
    options.source.admin.listTopics(),
    options.target.admin.listTopics(),
  ]);
  const partitionsOf = new Map(sourceTopics.map((t) => [t.name, t.partitions]));
  const targetPartitionsOf = new Map(targetTopics.map((t) => [t.name, t.partitions]));
  const { selected } = selectTopics(options.mapping, partitionsOf.keys());
  const partitions: PartitionComparison[] = [];
  const topicProblems: TopicProblem[] = [];

  for (const { source, target } of selected) {
    const count = partitionsOf.get(source) ?? 0;
    const targetCount = targetPartitionsOf.get(target);
    if (targetCount === undefined) {
      topicProblems.push({ source, target, message: `target topic ${target} does not exist` });
      continue;
    }
    if (targetCount < count) {
      topicProblems.push({
        source,
        target,
        message: `target topic ${target} has ${targetCount} partitions, the source ${count}`,
      });
      continue;
    }
    for (let partition = 0; partition < count; partition++) {
      options.signal?.throwIfAborted();
      const comparison = await comparePartition(
        options.source,
        options.target,
        { topic: source, partition },
        { topic: target, partition },
        {
          ...(options.fromOffset === undefined ? {} : { fromOffset: options.fromOffset }),
          ...(options.mirrorHeader === undefined ? {} : { mirrorHeader: options.mirrorHeader }),
          ...(options.copy === undefined ? {} : { copy: options.copy }),
        },
      );
      partitions.push(comparison);
      options.onPartition?.(comparison);
    }
  }
  const emptySelection =
    selected.length === 0 ? options.mapping.whyNothingSelected([...partitionsOf.keys()]) : null;
  const ok =
    emptySelection === null && topicProblems.length === 0 && partitions.every((p) => p.mismatch === null);
  return { partitions, topicProblems, emptySelection, ok };
}
