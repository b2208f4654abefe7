/**
 * What `run` tells the operator while it copies: records so far, the current rate (over the last
 * few seconds, not an average since the start, which hides a stall behind an hour of good
 * progress) and the current lag, as a live line on a terminal or a log line every 10 s.
 */
import { partitionKey } from "../core/model.js";
import type { ReplicationMetrics } from "../core/ports.js";
import type { CliLogger } from "./cli-logger.js";
import { type CliIo, count, isTerminal, LiveBlock } from "./console.js";

/** The run's own tally of the worker's events, passed on to `forward` (the Prometheus metrics). */
export class RunTally implements ReplicationMetrics {
  records = 0;
  bytes = 0;
  errors = 0;
  lost = 0;
  /** Per partition, as of its last copied batch. */
  readonly #lag = new Map<string, number>();
  readonly #logger: Pick<CliLogger, "healthy"> | undefined;
  readonly #forward: ReplicationMetrics | undefined;

  constructor(options: { logger?: Pick<CliLogger, "healthy">; forward?: ReplicationMetrics } = {}) {
    this.#logger = options.logger;
    this.#forward = options.forward;
  }

  batchCopied(event: Parameters<ReplicationMetrics["batchCopied"]>[0]): void {
    this.records += event.records;
    this.bytes += event.bytes;
    if (event.highWatermark !== undefined)
      this.#lag.set(partitionKey(event), Math.max(0, event.highWatermark - event.nextOffset));
    // Both clusters answered: an outage the log is folding is over.
    this.#logger?.healthy();
    this.#forward?.batchCopied(event);
  }
  recordsLost(event: Parameters<ReplicationMetrics["recordsLost"]>[0]): void {
    this.lost++;
    this.#forward?.recordsLost(event);
  }
  partitionError(event: Parameters<ReplicationMetrics["partitionError"]>[0]): void {
    this.errors++;
    this.#forward?.partitionError(event);
  }

  /** Records not yet copied over the partitions this run copied from. */
  get lag(): number {
    let sum = 0;
    for (const lag of this.#lag.values()) sum += lag;
    return sum;
  }
}

/** Records per second over the last `windowMs`, from samples taken as the progress ticks. */
export class RateWindow {
  readonly #windowMs: number;
  #samples: { at: number; records: number }[] = [];

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  sample(at: number, records: number): number {
    this.#samples.push({ at, records });
    // Keep one sample at or before the window's start, so the rate spans the whole window.
    while (this.#samples.length > 2 && (this.#samples[1]?.at ?? at) <= at - this.#windowMs)
      this.#samples.shift();
    const first = this.#samples[0] ?? { at, records };
    const seconds = (at - first.at) / 1_000;
    return seconds <= 0 ? 0 : (records - first.records) / seconds;
  }
}

export interface Progress {
  readonly live: LiveBlock | null;
  /** The current line (rate over the last window), for the final redraw. */
  line(): string;
  stop(): void;
}

const RATE_WINDOW_MS = 10_000;

/** A live line on a terminal, a log line every 10 s otherwise, nothing with --json. */
export function startProgress(
  workerId: string,
  tally: RunTally,
  options: { readonly json: boolean; readonly logger: Pick<CliLogger, "notice"> },
  io: CliIo,
  now: () => number = Date.now,
): Progress {
  const window = new RateWindow(RATE_WINDOW_MS);
  window.sample(now(), tally.records);
  const live = !options.json && isTerminal(io) ? new LiveBlock(io) : null;
  let rate = 0;
  const line = (): string =>
    `${workerId}: ${count(tally.records)} records copied, ${count(Math.round(rate))} rec/s now, lag ${count(tally.lag)} records`;
  const tick = (): void => {
    rate = window.sample(now(), tally.records);
    if (live) live.draw(line());
    else if (!options.json)
      options.logger.notice(line(), {
        records: tally.records,
        recordsPerSecond: Math.round(rate),
        lag: tally.lag,
      });
  };
  const ticker = setInterval(tick, live ? 500 : 10_000);
  return { line, live, stop: () => clearInterval(ticker) };
}
