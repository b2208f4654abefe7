/**
 * The worker's ReplicationMetrics as Prometheus metrics, for a long `kafka-mirror run` on a host
 * that Prometheus scrapes (the functions publish EMF instead, emf-metrics.ts). Names follow what
 * MirrorMaker 2 users scrape from its MirrorSourceConnector (README, Operations):
 * replication-latency-ms, record-age-ms, record-count, byte-count, plus the lag per partition.
 * `render()` writes the text exposition format (version 0.0.4).
 */
import type { Clock, ReplicationMetrics } from "../core/ports.js";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The names, with the help text each gets in the exposition. */
export const PrometheusMetric = {
  records: [
    "kafka_mirror_records_total",
    "counter",
    "Records copied from the source topic (MM2 record-count)",
  ],
  bytes: ["kafka_mirror_bytes_total", "counter", "Bytes of record batches copied (MM2 byte-count)"],
  lag: [
    "kafka_mirror_lag_records",
    "gauge",
    "Records in the source partition not yet copied, as of its last copied batch",
  ],
  latency: [
    "kafka_mirror_replication_latency_ms",
    "gauge",
    "Newest record's timestamp to its write acknowledged by the target, last batch (MM2 replication-latency-ms)",
  ],
  age: [
    "kafka_mirror_record_age_ms",
    "gauge",
    "Newest record's age when the worker read it, last batch (MM2 record-age-ms)",
  ],
  lost: [
    "kafka_mirror_lost_records_total",
    "counter",
    "Records deleted from the source before they were copied",
  ],
  errors: ["kafka_mirror_partition_errors_total", "counter", "Partitions stopped by a non-retryable error"],
  otherWriter: [
    "kafka_mirror_other_writer_batches_total",
    "counter",
    'target.copy "batches": batches of another producer found in the target partitions (skipped)',
  ],
  held: ["kafka_mirror_partitions_held", "gauge", "Partitions whose lease this process holds"],
} as const satisfies Record<string, readonly [string, "counter" | "gauge", string]>;

type Name = keyof typeof PrometheusMetric;

interface PartitionGauges {
  lag?: number;
  latency?: number;
  age?: number;
}

export interface PrometheusMetricsOptions {
  readonly clock: Clock;
  /** Partitions held now, read at each scrape (the lease table knows, the worker's events do not). */
  readonly partitionsHeld?: () => Promise<number>;
}

export class PrometheusMetrics implements ReplicationMetrics {
  readonly #clock: Clock;
  readonly #partitionsHeld: (() => Promise<number>) | undefined;
  readonly #topics = new Map<string, { records: number; bytes: number; lost: number; otherWriter: number }>();
  /** By topic, then partition: label sets stay sorted and small (one per partition copied). */
  readonly #partitions = new Map<string, Map<number, PartitionGauges>>();
  /** By "topic\0code": the code is a closed list, so a few series at most. */
  readonly #errors = new Map<string, number>();

  constructor(options: PrometheusMetricsOptions) {
    this.#clock = options.clock;
    this.#partitionsHeld = options.partitionsHeld;
  }

  batchCopied(event: Parameters<ReplicationMetrics["batchCopied"]>[0]): void {
    const tally = this.#tally(event.topic);
    tally.records += event.records;
    tally.bytes += event.bytes;
    const gauges = this.#gauges(event.topic, event.partition);
    if (event.highWatermark !== undefined) gauges.lag = Math.max(0, event.highWatermark - event.nextOffset);
    if (event.newestTimestamp !== undefined) {
      // Called once the target acknowledged the batch: now is when the newest record landed.
      gauges.latency = Math.max(0, this.#clock.now() - event.newestTimestamp);
      if (event.fetchedAt !== undefined) gauges.age = Math.max(0, event.fetchedAt - event.newestTimestamp);
    }
  }

  recordsLost(event: Parameters<ReplicationMetrics["recordsLost"]>[0]): void {
    this.#tally(event.topic).lost += Math.max(0, event.to - event.from);
  }

  partitionError(event: Parameters<ReplicationMetrics["partitionError"]>[0]): void {
    const key = `${event.topic}\0${event.code}`;
    this.#errors.set(key, (this.#errors.get(key) ?? 0) + 1);
  }

  otherWriterSeen(event: Parameters<NonNullable<ReplicationMetrics["otherWriterSeen"]>>[0]): void {
    this.#tally(event.topic).otherWriter += event.batches;
  }

  /** The exposition of everything so far: counters since the start, gauges as last seen. */
  async render(): Promise<string> {
    const out: string[] = [];
    const topics = [...this.#topics].sort(([a], [b]) => compare(a, b));
    family(
      out,
      "records",
      topics.map(([topic, t]) => [{ topic }, t.records]),
    );
    family(
      out,
      "bytes",
      topics.map(([topic, t]) => [{ topic }, t.bytes]),
    );
    family(
      out,
      "lost",
      topics.map(([topic, t]) => [{ topic }, t.lost]),
    );
    // Only topics that met one: records mode never does.
    family(
      out,
      "otherWriter",
      topics.flatMap(([topic, t]) => (t.otherWriter > 0 ? [[{ topic }, t.otherWriter]] : [])),
    );
    const partitions = [...this.#partitions]
      .sort(([a], [b]) => compare(a, b))
      .flatMap(([topic, byPartition]) =>
        [...byPartition]
          .sort(([a], [b]) => a - b)
          .map(([p, g]) => [{ topic, partition: String(p) }, g] as const),
      );
    for (const name of ["lag", "latency", "age"] as const) {
      family(
        out,
        name,
        partitions.flatMap(([labels, g]) => (g[name] === undefined ? [] : [[labels, g[name]]])),
      );
    }
    const errors = [...this.#errors].sort(([a], [b]) => compare(a, b));
    family(
      out,
      "errors",
      errors.map(([key, n]) => [labelsOfError(key), n]),
    );
    if (this.#partitionsHeld !== undefined) family(out, "held", [[{}, await this.#partitionsHeld()]]);
    return `${out.join("\n")}\n`;
  }

  #tally(topic: string): { records: number; bytes: number; lost: number; otherWriter: number } {
    let tally = this.#topics.get(topic);
    if (tally === undefined) {
      tally = { records: 0, bytes: 0, lost: 0, otherWriter: 0 };
      this.#topics.set(topic, tally);
    }
    return tally;
  }

  #gauges(topic: string, partition: number): PartitionGauges {
    let byPartition = this.#partitions.get(topic);
    if (byPartition === undefined) {
      byPartition = new Map();
      this.#partitions.set(topic, byPartition);
    }
    let gauges = byPartition.get(partition);
    if (gauges === undefined) {
      gauges = {};
      byPartition.set(partition, gauges);
    }
    return gauges;
  }
}

type Sample = readonly [Readonly<Record<string, string>>, number];

/** One metric's HELP, TYPE and samples; nothing for a family without samples yet. */
function family(out: string[], name: Name, samples: readonly Sample[]): void {
  if (samples.length === 0) return;
  const [metric, type, help] = PrometheusMetric[name];
  out.push(`# HELP ${metric} ${help}`, `# TYPE ${metric} ${type}`);
  for (const [labels, value] of samples) out.push(`${metric}${labelText(labels)} ${value}`);
}

function labelText(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** The exposition format's escapes for a label value: backslash, double quote, newline. */
export function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function labelsOfError(key: string): Record<string, string> {
  const [topic = "", code = ""] = key.split("\0");
  return { topic, code };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
