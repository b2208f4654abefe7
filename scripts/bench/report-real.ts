/** The real bench's table (one column per tool) and its JSON line. */
import type { RealBenchResult } from "./real.js";
import type { ToolRun } from "./real-tools.js";
import { fmt, round } from "./report.js";

export interface RealBenchSummary {
  readonly kafka: "real";
  readonly brokers: number;
  /** The mirror's target.copy. */
  readonly copy: string;
  /** The mirror's target.compression. */
  readonly target_compression: string;
  readonly records: number;
  readonly mirror_rps: number;
  readonly kcat_rps: number;
  readonly mm2_rps: number;
  /** mirror / kcat. */
  readonly ratio: number;
  /** mirror / MirrorMaker 2. */
  readonly ratio_mm2: number;
  /** The mirror's; each tool's below. */
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Records/s the mirror's latency producer achieved (each run fails below 95% of --rate). */
  readonly achieved_rps: number;
  readonly kcat_p99_ms: number;
  readonly kcat_achieved_rps: number;
  readonly mm2_p99_ms: number;
  readonly mm2_achieved_rps: number;
  readonly cpu_s_per_gib: number;
  /**
   * The worker's over the second half of its copy (WorkerReport.secondHalf): no start-up or wind-down.
   * Per GiB of payload, as the others: the half's share of the payload is its share of the bytes
   * the worker counted.
   */
  readonly cpu_s_per_gib_second_half: number | null;
  readonly kcat_cpu_s_per_gib: number;
  readonly mm2_cpu_s_per_gib: number;
  readonly rss_mb: number;
  readonly mm2_rss_mb: number;
  readonly verified: boolean;
  readonly mm2_verified: boolean;
  /** MM2 from spawn to its source task RUNNING. */
  readonly mm2_start_ms: number;
  /** The Node version kafka-mirror's worker ran on (--worker-node). */
  readonly worker_node: string;
}

export function summarizeReal(result: RealBenchResult): RealBenchSummary {
  const { kcat, mm2, mirror } = result;
  const gib = result.payloadBytes / 2 ** 30;
  const perGib = (run: ToolRun): number => round(run.cpuSeconds / gib, 2);
  const secondHalf = secondHalfCpuPerGib(result);
  return {
    kafka: "real",
    brokers: result.options.brokers,
    copy: result.options.copy,
    target_compression: result.options.targetCompression,
    records: result.records,
    mirror_rps: Math.round(mirror.window.rps),
    kcat_rps: Math.round(kcat.window.rps),
    mm2_rps: Math.round(mm2.window.rps),
    ratio: round(mirror.window.rps / kcat.window.rps, 3),
    ratio_mm2: round(mirror.window.rps / mm2.window.rps, 3),
    p50_ms: mirror.latency.p50Ms,
    p99_ms: mirror.latency.p99Ms,
    achieved_rps: Math.round(mirror.latency.producedRate),
    kcat_p99_ms: kcat.latency.p99Ms,
    kcat_achieved_rps: Math.round(kcat.latency.producedRate),
    mm2_p99_ms: mm2.latency.p99Ms,
    mm2_achieved_rps: Math.round(mm2.latency.producedRate),
    cpu_s_per_gib: perGib(mirror),
    cpu_s_per_gib_second_half: secondHalf === undefined ? null : round(secondHalf, 2),
    kcat_cpu_s_per_gib: perGib(kcat),
    mm2_cpu_s_per_gib: perGib(mm2),
    rss_mb: Math.round(mirror.rssMb ?? Number.NaN),
    mm2_rss_mb: Math.round(mm2.rssMb ?? Number.NaN),
    verified: mirror.verified === true,
    mm2_verified: mm2.verified === true,
    mm2_start_ms: mm2.own.startMs ?? Number.NaN,
    worker_node: result.workerNode,
  };
}

export function formatRealTable(result: RealBenchResult): string {
  const { options: o, kcat, mm2, mirror } = result;
  const tools = [kcat, mm2, mirror];
  const gib = result.payloadBytes / 2 ** 30;
  const rows: string[][] = [
    ["", "kcat -C -e | kcat -P", "MirrorMaker 2", "kafka-mirror"],
    ["copy rate (records/s)", ...tools.map((t) => fmt(t.window.rps))],
    ["copy window (s)", ...tools.map((t) => (t.window.windowMs / 1000).toFixed(2))],
    ["first record after (s)", ...tools.map((t) => (t.window.firstRecordMs / 1000).toFixed(2))],
    [
      "verified record for record",
      ...tools.map((t) => (t.verified === null ? "counted" : t.verified ? "yes" : "NO")),
    ],
    ["CPU s per GiB copied", ...tools.map((t) => (t.cpuSeconds / gib).toFixed(2))],
    ["  over the copy's second half", "-", "-", secondHalfCpuPerGib(result)?.toFixed(2) ?? "n/a"],
    ["peak RSS (MB)", ...tools.map((t) => (t.rssMb === null ? "-" : String(Math.round(t.rssMb))))],
    [
      `latency at ${fmt(o.rate)} rec/s: p50 / p99 / max (ms)`,
      ...tools.map((t) => `${t.latency.p50Ms} / ${t.latency.p99Ms} / ${t.latency.maxMs}`),
    ],
    ["  producer achieved (rec/s)", ...tools.map((t) => fmt(t.latency.producedRate))],
    ["  arrived", ...tools.map((t) => `${t.latency.received}/${t.latency.produced}`)],
    [
      "own timing",
      `${(num(kcat.own.elapsedMs) / 1000).toFixed(2)} s spawn to exit`,
      `${(num(mm2.own.startMs) / 1000).toFixed(2)} s spawn to task RUNNING`,
      `replicate() ${(num(mirror.own.elapsedMs) / 1000).toFixed(2)} s, first batch ${(num(mirror.own.startupMs) / 1000).toFixed(2)} s`,
    ],
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  const table = rows.map((r) =>
    r
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
  const summary = summarizeReal(result);
  return [
    `machine  ${result.machine}`,
    `data     ${result.records} records x ${o.recordBytes} B over ${o.partitions} partitions (${(result.payloadBytes / 2 ** 20).toFixed(0)} MiB payload), ` +
      `two ${o.brokers}-broker Apache Kafka 4.1.2 clusters; source written at ${fmt(result.produceRps)} rec/s`,
    ...table,
    `ratio mirror / kcat ${summary.ratio}, mirror / MirrorMaker 2 ${summary.ratio_mm2}`,
  ].join("\n");
}

function num(n: number | undefined): number {
  return n ?? Number.NaN;
}

/** The worker's CPU seconds per GiB of payload over the second half of its copy, if it said. */
function secondHalfCpuPerGib(result: RealBenchResult): number | undefined {
  const { secondHalfCpuMs: cpuMs, secondHalfShare: share } = result.mirror.own;
  if (cpuMs === undefined || share === undefined || share <= 0) return undefined;
  return cpuMs / 1000 / ((result.payloadBytes / 2 ** 30) * share);
}
