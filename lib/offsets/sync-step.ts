/**
 * The sync as a scheduled step (the lag function, every minute): every selected group, with each
 * Kafka call retried until the step's deadline. A failure of the whole step (the source's group
 * list unreachable) is counted like a failed group, so the GroupSyncErrors alarm sees it; it
 * never fails the lag measurement it runs beside.
 */
import type {
  ClusterAdmin,
  GroupAdmin,
  LeaseStore,
  Logger,
  SourceReader,
  TopicMapping,
} from "../core/ports.js";
import type { KafkaRetry } from "../core/retry.js";
import { retryingAdmin, retryingReader } from "../core/retrying-ports.js";
import { describeError } from "../errors.js";
import type { GroupSelector } from "./group-selection.js";
import type { TranslateDeps } from "./model.js";
import { retryingGroups } from "./retrying-groups.js";
import { type SyncReport, syncGroups } from "./sync.js";

export type GroupSyncStep = GroupSyncClients & GroupSyncCopies;

interface GroupSyncClients {
  readonly sourceGroups: GroupAdmin;
  readonly targetGroups: GroupAdmin;
  /** A READ_COMMITTED reader and an admin of the TARGET. */
  readonly targetReader: SourceReader;
  readonly targetAdmin: ClusterAdmin;
  readonly selector: GroupSelector;
  /** Stamped into each commit's metadata (and, in records mode, the alias provenance names). */
  readonly sourceAlias: string;
}

/** How the translation tells our copies in the target (target.copy). */
type GroupSyncCopies =
  /** By their provenance header. */
  | { readonly copy?: "records"; readonly header: Buffer }
  /** By matching them to the source's batches, read with this reader of the SOURCE. */
  | { readonly copy: "batches"; readonly sourceReader: SourceReader };

export const NO_SYNC: SyncReport = { groups: [], synced: 0, failed: 0, active: 0, maxNotCopied: 0 };

export async function runGroupSync(
  step: GroupSyncStep,
  context: {
    readonly sourceAdmin: ClusterAdmin;
    readonly leases: Pick<LeaseStore, "list">;
    readonly mapping: TopicMapping;
    readonly logger: Logger;
    readonly retry: KafkaRetry;
  },
): Promise<SyncReport> {
  const { retry, logger } = context;
  try {
    const report = await syncGroups(
      {
        sourceGroups: retryingGroups(step.sourceGroups, retry),
        targetGroups: retryingGroups(step.targetGroups, retry),
        sourceAdmin: retryingAdmin(context.sourceAdmin, retry),
        translate: translation(step, retry),
        mapping: context.mapping,
        leases: context.leases,
        selector: step.selector,
        logger,
      },
      { sourceAlias: step.sourceAlias },
    );
    for (const g of report.groups.filter((r) => r.status === "synced")) {
      logger.info("group offsets synced", {
        groupId: g.groupId,
        partitions: g.committed.length,
        notCopied: g.notCopied,
      });
    }
    return report;
  } catch (error) {
    logger.error("group offset sync failed", describeError(error));
    return { ...NO_SYNC, failed: 1 };
  }
}

/** The translation's clients, each retried until the step's deadline. */
function translation(step: GroupSyncStep, retry: KafkaRetry): TranslateDeps {
  const target = {
    reader: retryingReader(step.targetReader, retry),
    admin: retryingAdmin(step.targetAdmin, retry),
    retry,
  };
  return step.copy === "batches"
    ? { ...target, copy: "batches", source: retryingReader(step.sourceReader, retry) }
    : { ...target, header: step.header, sourceAlias: step.sourceAlias };
}
