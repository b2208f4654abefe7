/**
 * What one replication run did: per partition, what it copied over all the terms it held the
 * lease, and every error. The run records into a RunTally as terms end; the summary is read once.
 */
import type { ErrorCode, ReplicatorError } from "../../errors.js";
import { partitionKey, type TopicPartition } from "../model.js";
import type { PartitionRoute } from "../plan/model.js";
import type { PumpStatus, PumpStopReason } from "../pump/partition-pump.js";

export interface PartitionSummary {
  readonly source: TopicPartition;
  readonly target: TopicPartition;
  /** Records and bytes this worker copied in this run, over all the times it held the lease. */
  readonly records: number;
  readonly bytes: number;
  /** How many times this worker took the lease during the run. */
  readonly terms: number;
  readonly checkpoint: number | null;
  readonly caughtUp: boolean;
  /** Why the last term ended. */
  readonly stopReason: PumpStopReason | null;
  readonly error: ReplicatorError | null;
}

export interface RunError {
  readonly topic: string;
  /** null for errors of a whole topic (planning). */
  readonly partition: number | null;
  readonly code: ErrorCode;
  readonly message: string;
}

/** "drained": ReplicateOptions.drainAt passed and the run holds nothing any more. */
export type RunEndReason = "deadline" | "caught-up" | "aborted" | "drained";

export interface RunSummary {
  readonly workerId: string;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly endReason: RunEndReason;
  /** Every partition this worker held at some point of the run. */
  readonly partitions: PartitionSummary[];
  readonly errors: RunError[];
  /** Every partition held at the end was caught up and none ended in error. */
  readonly caughtUp: boolean;
  /** The last topic plan selected no source topic: why (TopicPlan.emptySelection); else null. */
  readonly emptySelection: string | null;
}

interface PartitionTally {
  readonly route: PartitionRoute;
  records: number;
  bytes: number;
  terms: number;
  last: PumpStatus | null;
}

export class RunTally {
  readonly #tallies = new Map<string, PartitionTally>();
  readonly #errors: RunError[] = [];

  /** A planning or lease-store error of the whole run (no topic) or of one topic. */
  topicError(topic: string, error: ReplicatorError): void {
    this.#errors.push({ topic, partition: null, code: error.code, message: error.message });
  }

  /** Adds up one finished term of a partition, and its error if it ended on one. */
  termEnded(route: PartitionRoute, status: PumpStatus): void {
    const key = partitionKey(route.source);
    const tally = this.#tallies.get(key) ?? { route, records: 0, bytes: 0, terms: 0, last: null };
    tally.records += status.records;
    tally.bytes += status.bytes;
    tally.terms += 1;
    tally.last = status;
    this.#tallies.set(key, tally);
    if (status.error !== null) {
      const { topic, partition } = route.source;
      this.#errors.push({ topic, partition, code: status.error.code, message: status.error.message });
    }
  }

  summary(
    run: Pick<RunSummary, "workerId" | "startedAt" | "endedAt" | "endReason" | "emptySelection">,
  ): RunSummary {
    const partitions: PartitionSummary[] = [...this.#tallies.values()]
      .sort((a, b) => compareRoutes(a.route, b.route))
      .map((t) => ({
        source: t.route.source,
        target: t.route.target,
        records: t.records,
        bytes: t.bytes,
        terms: t.terms,
        checkpoint: t.last?.checkpoint ?? null,
        caughtUp: t.last?.caughtUp ?? false,
        stopReason: t.last?.stopReason ?? null,
        error: t.last?.error ?? null,
      }));
    const held = partitions.filter((p) => p.stopReason !== "lease-lost");
    return {
      ...run,
      partitions,
      errors: [...this.#errors],
      caughtUp: this.#errors.length === 0 && held.every((p) => p.caughtUp),
    };
  }
}

function compareRoutes(a: PartitionRoute, b: PartitionRoute): number {
  if (a.source.topic !== b.source.topic) return a.source.topic < b.source.topic ? -1 : 1;
  return a.source.partition - b.source.partition;
}
