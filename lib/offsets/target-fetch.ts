/**
 * What both translation modes do to the target: one fetch that gets somewhere towards the end
 * the translation listed when it started, waiting out another writer's open transaction until
 * the caller's deadline (target-read.ts says why it may not stop at the LSO); and the error for
 * an offset the map cannot start from.
 */
import type { FetchLimits, FetchProgress, TopicPartition } from "../core/model.js";
import { fetchTowards } from "../core/pump/target-read.js";
import { retryRetryable } from "../core/retry.js";
import { isReplicatorError, ReplicatorError } from "../errors.js";
import type { TargetScanDeps, TranslationRequest } from "./model.js";

/**
 * One fetch of `target` from `offset` that gets somewhere towards `to`, waiting out an open
 * transaction until the caller's deadline; null when the start is no longer in the log (target
 * retention).
 */
export async function fetchTargetTowards<F extends FetchProgress>(
  deps: TargetScanDeps,
  target: TopicPartition,
  offset: number,
  to: number,
  read: (offset: number, limits: FetchLimits) => Promise<F>,
): Promise<F | null> {
  try {
    return await retryRetryable(
      `reading target ${target.topic}/${target.partition} up to offset ${to}`,
      () => fetchTowards(read, target, offset, to),
      deps.retry,
      (error) => isReplicatorError(error, "TARGET_TRANSACTION_OPEN"),
    );
  } catch (error) {
    if (isReplicatorError(error, "OFFSET_OUT_OF_RANGE")) return null;
    throw error;
  }
}

export function untranslatable(request: TranslationRequest, why?: string): ReplicatorError {
  const { source, target, sourceOffset } = request;
  return new ReplicatorError(
    "OFFSETS_UNTRANSLATABLE",
    `${source.topic}/${source.partition}: offset ${sourceOffset} cannot be translated exactly: ${
      why ??
      "the lease's offset map has no point at or below it (exactly-once checkpoints keep it: provenance.enabled, " +
        'or target.copy "batches"; ' +
        "a map begun after copying started, e.g. an upgraded lease, covers only offsets from its first point)"
    }`,
    {
      details: { topic: source.topic, partition: source.partition, targetTopic: target.topic, sourceOffset },
    },
  );
}
