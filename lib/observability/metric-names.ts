/**
 * The CloudWatch metrics kafka-mirror publishes (EMF, namespace below). The functions emit them and
 * the stack's alarms and dashboard read them; both import these names so they cannot drift apart.
 *
 * Per-topic metrics carry the dimensions `service` and `Topic`; the `Max*`/`Total*` aggregates
 * carry `service` only, because alarms cannot follow topics that appear after deployment.
 * `PartitionsFailed` is published under `service` (the alarm's) and `service` + `ErrorCode` (the
 * ReplicatorError code: a closed list, so a few metrics at most, never one per partition).
 * `PartitionLagRecords` carries `service`, `Topic` and `Partition`, for the most lagging
 * partitions only (MAX_PARTITION_LAG_METRICS below).
 */
export const METRICS_NAMESPACE = "KafkaMirror";
export const TOPIC_DIMENSION = "Topic";
export const SERVICE_DIMENSION = "service";
export const ERROR_CODE_DIMENSION = "ErrorCode";
export const PARTITION_DIMENSION = "Partition";

/**
 * How many partitions get a PartitionLagRecords metric per measurement: the most lagging ones
 * (lag > 0), not all. Each (Topic, Partition) pair is a custom metric billed for the hours it
 * gets data; one per partition would cost hundreds of dollars a month at a few thousand
 * partitions and mostly say "0". A top 20 costs at most about 20 metrics at a time and shows
 * exactly the partitions on-call asks about; the rest are in `kafka-mirror status`.
 */
export const MAX_PARTITION_LAG_METRICS = 20;

export const MetricName = {
  RecordsCopied: "RecordsCopied",
  BytesCopied: "BytesCopied",
  LostRecords: "LostRecords",
  Errors: "Errors",
  LagRecords: "LagRecords",
  LagSeconds: "LagSeconds",
  /** Records not yet copied of one partition, for the MAX_PARTITION_LAG_METRICS most lagging. */
  PartitionLagRecords: "PartitionLagRecords",
  MaxLagRecords: "MaxLagRecords",
  MaxLagSeconds: "MaxLagSeconds",
  StalledPartitions: "StalledPartitions",
  TotalLostRecords: "TotalLostRecords",
  TotalErrors: "TotalErrors",
  /**
   * Partition failures: a pump stopped on a non-retryable error, each retry that fails again
   * counted too (lib/core/run/failure-backoff.ts); 0 in every healthy flush. Which partitions: the
   * document's `partitions` field and the replicate logs.
   */
  PartitionsFailed: "PartitionsFailed",
  /** Lease table items a scan could not read as leases (another app's, hand-edited); `service` only. */
  LeaseItemsSkipped: "LeaseItemsSkipped",
  /**
   * target.copy "batches": batches of another producer that looks found in target partitions
   * (ReplicationMetrics.otherWriterSeen); per topic, only when it happened.
   */
  OtherWriterBatches: "OtherWriterBatches",
  /** Consumer groups whose target offsets the lag function's sync left at the translation (`service` only). */
  GroupsSynced: "GroupsSynced",
  /** Groups the sync skipped because they have members on the target. */
  GroupsActiveOnTarget: "GroupsActiveOnTarget",
  /** Groups (or the whole step) the sync failed for; 0 every healthy run, so silence alarms too. */
  GroupSyncErrors: "GroupSyncErrors",
  /** The largest number of records of one synced group's partitions not yet copied: its RPO. */
  GroupMaxRecordsNotCopied: "GroupMaxRecordsNotCopied",
} as const;
