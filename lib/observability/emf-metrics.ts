/**
 * CloudWatch metrics as EMF (Powertools metrics): the worker's ReplicationMetrics events and the
 * lag monitor's measurements, summed per topic during an invocation and written on `flush()` as
 * one EMF document per topic, one per error code that failed partitions, and one for the
 * aggregates the alarms watch.
 */
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import type { ReplicationMetrics } from "../core/ports.js";
import type { LagReport } from "../lag/lag-report.js";
import type { SyncReport } from "../offsets/sync.js";
import {
  ERROR_CODE_DIMENSION,
  MAX_PARTITION_LAG_METRICS,
  METRICS_NAMESPACE,
  MetricName,
  PARTITION_DIMENSION,
  TOPIC_DIMENSION,
} from "./metric-names.js";

export interface EmfMetricsOptions {
  /** The `service` dimension: one per deployed stack, so regions do not mix. */
  readonly serviceName: string;
  /** @default KafkaMirror */
  readonly namespace?: string;
}

interface TopicTally {
  records: number;
  bytes: number;
  lost: number;
  errors: number;
  otherWriterBatches: number;
}

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export class EmfMetrics implements ReplicationMetrics {
  readonly #serviceName: string;
  readonly #namespace: string;
  readonly #topics = new Map<string, TopicTally>();
  /** Failed partitions ("topic/partition", once per failure) by error code. */
  readonly #failed = new Map<string, string[]>();
  #lag: LagReport | undefined;
  #leaseItemsSkipped = 0;
  #groupSync: Pick<SyncReport, "synced" | "failed" | "active" | "maxNotCopied"> | undefined;

  constructor(options: EmfMetricsOptions) {
    this.#serviceName = options.serviceName;
    this.#namespace = options.namespace ?? METRICS_NAMESPACE;
  }

  batchCopied(event: Parameters<ReplicationMetrics["batchCopied"]>[0]): void {
    const tally = this.#tally(event.topic);
    tally.records += event.records;
    tally.bytes += event.bytes;
  }

  recordsLost(event: Parameters<ReplicationMetrics["recordsLost"]>[0]): void {
    this.#tally(event.topic).lost += Math.max(0, event.to - event.from);
  }

  partitionError(event: Parameters<ReplicationMetrics["partitionError"]>[0]): void {
    this.#tally(event.topic).errors += 1;
    if (event.partition < 0) return; // a whole topic left out: an error, not a failed partition
    const failed = this.#failed.get(event.code) ?? [];
    failed.push(`${event.topic}/${event.partition}`);
    this.#failed.set(event.code, failed);
  }

  otherWriterSeen(event: Parameters<NonNullable<ReplicationMetrics["otherWriterSeen"]>>[0]): void {
    this.#tally(event.topic).otherWriterBatches += event.batches;
  }

  /** Counted per scan that met the item, so a lasting bad item shows in every period. */
  leaseItemSkipped(): void {
    this.#leaseItemsSkipped += 1;
  }

  /** Lag of the latest measurement; replaces an earlier one not yet flushed. */
  lagMeasured(report: LagReport): void {
    this.#lag = report;
  }

  /** The lag function's group offset sync (lib/offsets/sync.ts); replaces an earlier one not yet flushed. */
  groupSyncMeasured(report: Pick<SyncReport, "synced" | "failed" | "active" | "maxNotCopied">): void {
    this.#groupSync = report;
  }

  /** Writes everything gathered since the last flush to stdout and starts over. */
  flush(): void {
    const lagByTopic = new Map((this.#lag?.topics ?? []).map((t) => [t.topic, t]));
    const topics = new Set([...this.#topics.keys(), ...lagByTopic.keys()]);
    let lost = 0;
    let errors = 0;
    for (const topic of [...topics].sort()) {
      const metrics = this.#emitter({ [TOPIC_DIMENSION]: topic });
      const tally = this.#topics.get(topic);
      if (tally !== undefined) {
        add(metrics, MetricName.RecordsCopied, MetricUnit.Count, tally.records);
        add(metrics, MetricName.BytesCopied, MetricUnit.Bytes, tally.bytes);
        add(metrics, MetricName.LostRecords, MetricUnit.Count, tally.lost);
        add(metrics, MetricName.Errors, MetricUnit.Count, tally.errors);
        // Only when it happened, as LeaseItemsSkipped: records mode never has it.
        if (tally.otherWriterBatches > 0)
          add(metrics, MetricName.OtherWriterBatches, MetricUnit.Count, tally.otherWriterBatches);
        lost += tally.lost;
        errors += tally.errors;
      }
      const lag = lagByTopic.get(topic);
      if (lag !== undefined) {
        add(metrics, MetricName.LagRecords, MetricUnit.Count, lag.lagRecords);
        add(metrics, MetricName.LagSeconds, MetricUnit.Seconds, lag.lagSeconds);
      }
      metrics.publishStoredMetrics();
    }
    this.#publishPartitionLag();
    const failedPartitions = this.#publishFailed();
    const totals = this.#emitter({});
    // Zeros are published on purpose: an alarm that treats missing data as breaching must see a
    // healthy value, not silence, when everything is fine.
    add(totals, MetricName.TotalLostRecords, MetricUnit.Count, lost);
    add(totals, MetricName.TotalErrors, MetricUnit.Count, errors);
    add(totals, MetricName.PartitionsFailed, MetricUnit.Count, failedPartitions);
    if (this.#lag !== undefined) {
      add(totals, MetricName.MaxLagRecords, MetricUnit.Count, this.#lag.maxLagRecords);
      add(totals, MetricName.MaxLagSeconds, MetricUnit.Seconds, this.#lag.maxLagSeconds);
      add(totals, MetricName.StalledPartitions, MetricUnit.Count, this.#lag.stalledPartitions);
    }
    // Only when it happened: it is a rare operator problem, not a health signal to alarm on silence.
    if (this.#leaseItemsSkipped > 0) {
      add(totals, MetricName.LeaseItemsSkipped, MetricUnit.Count, this.#leaseItemsSkipped);
    }
    if (this.#groupSync !== undefined) {
      add(totals, MetricName.GroupsSynced, MetricUnit.Count, this.#groupSync.synced);
      add(totals, MetricName.GroupsActiveOnTarget, MetricUnit.Count, this.#groupSync.active);
      add(totals, MetricName.GroupSyncErrors, MetricUnit.Count, this.#groupSync.failed);
      add(totals, MetricName.GroupMaxRecordsNotCopied, MetricUnit.Count, this.#groupSync.maxNotCopied);
    }
    totals.publishStoredMetrics();
    this.#topics.clear();
    this.#failed.clear();
    this.#lag = undefined;
    this.#groupSync = undefined;
    this.#leaseItemsSkipped = 0;
  }

  /** One document per lagging partition, the most lagging first, at most MAX_PARTITION_LAG_METRICS. */
  #publishPartitionLag(): void {
    const lagging = (this.#lag?.partitions ?? [])
      .filter((p) => p.lagRecords > 0)
      .sort((a, b) => b.lagRecords - a.lagRecords)
      .slice(0, MAX_PARTITION_LAG_METRICS);
    for (const p of lagging) {
      const metrics = this.#emitter({
        [TOPIC_DIMENSION]: p.topic,
        [PARTITION_DIMENSION]: String(p.partition),
      });
      add(metrics, MetricName.PartitionLagRecords, MetricUnit.Count, p.lagRecords);
      metrics.publishStoredMetrics();
    }
  }

  /**
   * One document per error code: PartitionsFailed by ErrorCode, the partitions as a plain field
   * (searchable in the logs, no dimension: one metric per partition would cost more than it
   * tells). Returns the failures of every code, for the `service`-only total the alarm watches.
   */
  #publishFailed(): number {
    let total = 0;
    for (const [code, partitions] of [...this.#failed].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const metrics = this.#emitter({ [ERROR_CODE_DIMENSION]: code });
      add(metrics, MetricName.PartitionsFailed, MetricUnit.Count, partitions.length);
      metrics.addMetadata("partitions", [...new Set(partitions)].sort().join(","));
      metrics.publishStoredMetrics();
      total += partitions.length;
    }
    return total;
  }

  #emitter(dimensions: Record<string, string>): Metrics {
    return new Metrics({
      namespace: this.#namespace,
      serviceName: this.#serviceName,
      defaultDimensions: dimensions,
    });
  }

  #tally(topic: string): TopicTally {
    let tally = this.#topics.get(topic);
    if (tally === undefined) {
      tally = { records: 0, bytes: 0, lost: 0, errors: 0, otherWriterBatches: 0 };
      this.#topics.set(topic, tally);
    }
    return tally;
  }
}

function add(metrics: Metrics, name: string, unit: Unit, value: number): void {
  metrics.addMetric(name, unit, value);
}
