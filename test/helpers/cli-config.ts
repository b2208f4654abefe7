/**
 * The YAML that CLI tests give `--config`: two clusters and the test bed's timings (seconds
 * instead of minutes: mock clusters on a shared 2-core machine).
 */

/** Two plaintext clusters, `whitelist`, the test bed's timings; `sourceAlias` and the source's timeout when given. */
export function cliConfigYaml(o: {
  readonly source: readonly string[];
  readonly target: readonly string[];
  readonly whitelist: string;
  readonly sourceAlias?: string;
  /** The source's request timeout; the commands retry a call for 3 of the slower side's. */
  readonly sourceRequestTimeoutMs?: number;
  /** target.copy. @default records (the setting left out) */
  readonly copy?: "records" | "batches";
  /** target.compression. @default none (the setting left out) */
  readonly compression?: string;
}): string {
  return [
    "source:",
    `  brokers: ${o.source.join(",")}`,
    ...(o.sourceAlias === undefined ? [] : [`  alias: ${o.sourceAlias}`]),
    ...(o.sourceRequestTimeoutMs === undefined ? [] : [`  requestTimeoutMs: ${o.sourceRequestTimeoutMs}`]),
    "target:",
    `  brokers: ${o.target.join(",")}`,
    ...(o.copy === undefined ? [] : [`  copy: ${o.copy}`]),
    ...(o.compression === undefined ? [] : [`  compression: ${o.compression}`]),
    ...testBedSettings(o.whitelist, 2000),
    "",
  ].join("\n");
}

/** The lines after the target's own: its request timeout, the whitelist, batch and lease timings. */
export function testBedSettings(whitelist: string, targetRequestTimeoutMs: number): string[] {
  return [
    `  requestTimeoutMs: ${targetRequestTimeoutMs}`,
    "topics:",
    `  whitelist: "${whitelist}"`,
    "batch:",
    "  maxWaitMs: 100",
    "leases:",
    "  durationMs: 10000",
    "  renewIntervalMs: 1000",
    "  rebalanceIntervalMs: 300",
  ];
}
