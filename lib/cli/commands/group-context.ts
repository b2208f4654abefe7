/**
 * What `offsets` and `failover` need beyond the clusters: both sides' group admins (retried by
 * the command's policy), the lease table (its offset maps) and the translation settings: the
 * provenance header (target.copy "records") or the source's reader (target.copy "batches").
 */

import { partitionKey } from "../../core/model.js";
import type { GroupAdmin, Lease } from "../../core/ports.js";
import { ReplicatorError } from "../../errors.js";
import type { GroupOffsetsDeps } from "../../offsets/group-offsets.js";
import type { TranslateDeps } from "../../offsets/model.js";
import { retryingGroups } from "../../offsets/retrying-groups.js";
import { clusterSide } from "../../wiring.js";
import type { CliIo } from "../console.js";
import { readLeaseState } from "../leases.js";
import { type Clusters, type GlobalOptions, mirrorHeaderOf, openClusters } from "./context.js";

export interface GroupContext {
  readonly clusters: Clusters;
  readonly deps: GroupOffsetsDeps;
  /** Every lease, by "topic:partition". */
  readonly leases: ReadonlyMap<string, Lease>;
  readonly sourceAlias: string;
  /** Where the leases were read: the last line of a text report. */
  readonly footer: string;
  close(): Promise<void>;
}

export async function openGroupContext(options: GlobalOptions, io: CliIo): Promise<GroupContext> {
  const clusters = await openClusters(options, io);
  const { config, logger, security, retry } = clusters;
  const opened: GroupAdmin[] = [];
  try {
    const translate = translation(clusters);
    const group = (side: "source" | "target"): GroupAdmin => {
      const admin = clusterSide(config, side, { logger, security: security[side] }).groups();
      opened.push(admin);
      return retryingGroups(admin, retry);
    };
    const { leases, footer } = await readLeaseState(config, { ...options, logger });
    const deps: GroupOffsetsDeps = {
      sourceGroups: group("source"),
      targetGroups: group("target"),
      sourceAdmin: clusters.source.admin,
      translate,
      mapping: clusters.mapping,
    };
    return {
      clusters,
      deps,
      leases: new Map(leases.map((l) => [partitionKey(l), l])),
      sourceAlias: config.source.alias,
      footer,
      async close() {
        await Promise.allSettled([...opened.map((g) => g.close()), clusters.close()]);
      },
    };
  } catch (error) {
    await Promise.allSettled([...opened.map((g) => g.close()), clusters.close()]);
    throw error;
  }
}

/**
 * How the translation tells our copies: by provenance (target.copy "records"), or by matching
 * them to the source's batches ("batches", which needs no header). Refuses records without one.
 */
function translation(clusters: Clusters): TranslateDeps {
  const { config, retry } = clusters;
  const target = { reader: clusters.target.reader, admin: clusters.target.admin, retry };
  if (config.target.copy === "batches") return { ...target, copy: "batches", source: clusters.source.reader };
  const header = mirrorHeaderOf(config);
  if (header === undefined) {
    throw new ReplicatorError(
      "OFFSETS_UNTRANSLATABLE",
      "provenance.enabled is false: copies carry no provenance, so group offsets cannot be translated exactly",
      { details: { field: "provenance.enabled" } },
    );
  }
  return { ...target, header, sourceAlias: config.source.alias };
}
