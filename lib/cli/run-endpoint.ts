/**
 * `run --metrics-port PORT [--metrics-host HOST]`: the run's metrics for Prometheus to scrape
 * (lib/observability/prometheus-*.ts), with the partitions this run holds read from the lease
 * table at each scrape.
 */
import { systemClock } from "../core/clock.js";
import type { LeaseStore } from "../core/ports.js";
import {
  DEFAULT_METRICS_HOST,
  type MetricsEndpoint,
  serveMetrics,
} from "../observability/prometheus-endpoint.js";
import { PrometheusMetrics } from "../observability/prometheus-metrics.js";
import { CliError, ExitCode } from "./cli-error.js";

export interface RunExporter {
  readonly metrics: PrometheusMetrics;
  readonly endpoint: MetricsEndpoint;
  /** From now on, scrapes count the leases of `leases` that worker `slot` (and its rounds) holds. */
  countHeld(leases: LeaseStore, slot: string): void;
}

/** `--metrics-port`'s value: 0 (any free port, printed at start) to 65535. */
export function metricsPortOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535)
    throw new CliError(
      `--metrics-port must be a port number from 0 to 65535, got "${value}"`,
      ExitCode.BAD_INPUT,
    );
  return port;
}

export async function startExporter(port: number, host: string | undefined): Promise<RunExporter> {
  let held: (() => Promise<number>) | undefined;
  const metrics = new PrometheusMetrics({
    clock: systemClock,
    partitionsHeld: () => held?.() ?? Promise.resolve(0),
  });
  const endpoint = await serveMetrics(() => metrics.render(), { port, host: host ?? DEFAULT_METRICS_HOST });
  return {
    metrics,
    endpoint,
    countHeld(leases, slot) {
      held = async () => {
        const now = systemClock.now();
        // A continuous run's rounds are workers `<slot>.<round>` (run.ts overlappingRounds).
        const ours = (owner: string | null) => owner === slot || owner?.startsWith(`${slot}.`) === true;
        return (await leases.list()).filter((l) => ours(l.owner) && l.expiresAt > now).length;
      };
    },
  };
}
