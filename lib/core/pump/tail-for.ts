/**
 * Which target tail (target-tail.ts) a pump gets: none at-least-once, one that reads provenance,
 * or, in batches mode, one that tells our copies by producer id.
 */
import { ReplicatorError } from "../../errors.js";
import type { CopyMode } from "../model.js";
import type { TargetWriter } from "../ports.js";
import type { ProvenanceSettings } from "../provenance.js";
import type { HeldLease } from "./held-lease.js";
import { TargetTail, type TargetTailDeps } from "./target-tail.js";

/** The target tail of an exactly-once pump (provenance, or batches mode); null at-least-once. */
export function tailFor(
  deps: TargetTailDeps | undefined,
  writer: TargetWriter,
  held: HeldLease,
  copy: CopyMode,
  provenance: ProvenanceSettings | null,
): TargetTail | null {
  if (copy === "records" && provenance === null) return null;
  if (deps === undefined) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      "exactly-once copies need a reader and admin of the target cluster",
    );
  }
  if (copy === "batches" && !writer.fences) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      'target.copy "batches" needs target.fencing "transactional": without fenced writes the target cannot say what landed',
    );
  }
  const { lease, route } = held;
  return new TargetTail(
    deps,
    route.source,
    route.target,
    provenance === null
      ? {
          copy: "batches",
          producerId: () => writer.producerId(route.target),
          stored: () => held.lease.producerIds ?? [],
        }
      : { copy: "records", provenance },
    // A position is only meaningful with the checkpoint it was stored with.
    lease.checkpoint === null ? null : (lease.targetOffset ?? null),
    writer.fences,
  );
}
