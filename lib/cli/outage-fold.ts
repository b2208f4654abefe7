/**
 * Folds the log lines of an outage. While a broker is down every request fails and is retried,
 * and kafkajs logs each failed connect: a 25 s outage printed 103 lines and never said it was
 * over. Here the first line of each kind of failure is printed, with its cause; repeats are only
 * counted (a reminder every `remindEveryMs`); and when the failures stop, one line says
 * "recovered after N s (M failed attempts)".
 */

/** A log line the fold decides about. */
export interface FoldedLine {
  /** info only for the "recovered" line, which is printed whatever the log level. */
  readonly level: "info" | "warn" | "error";
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

export interface OutageFoldOptions {
  readonly now: () => number;
  /** Where the lines that are kept go. */
  readonly emit: (line: FoldedLine) => void;
  /**
   * No transient failure for this long ends the outage. Longer than the largest retry pause
   * (5 s, core/retry.ts DEFAULT_BACKOFF), so a loop still retrying is never taken for recovered.
   * @default 10_000
   */
  readonly quietMs?: number;
  /** @default 60_000 */
  readonly remindEveryMs?: number;
}

/**
 * Failures that come back until the cause goes away: kafkajs's own lines, our retry warnings
 * ("<what> failed, retrying") and the worker's "<what> failed" (renewals, discovery, rounds).
 * Anything else (a whitelist that selects nothing, a lost lease) is printed every time.
 */
export function isTransientFailure(message: string): boolean {
  return message.startsWith("kafkajs: ") || message.endsWith(", retrying") || / failed(;|$)/.test(message);
}

interface Outage {
  readonly startedAt: number;
  lastFailureAt: number;
  lastReminderAt: number;
  failures: number;
  /** Failures by line, in the order first seen: each kind is printed once. */
  readonly kinds: Map<string, number>;
}

export class OutageFold {
  readonly #o: OutageFoldOptions;
  readonly #quietMs: number;
  readonly #remindEveryMs: number;
  #outage: Outage | null = null;

  constructor(options: OutageFoldOptions) {
    this.#o = options;
    this.#quietMs = options.quietMs ?? 10_000;
    this.#remindEveryMs = options.remindEveryMs ?? 60_000;
  }

  /** Prints `line` unless it repeats a failure of the current outage (then counts it). */
  log(line: FoldedLine): void {
    if (!isTransientFailure(line.message)) {
      this.#o.emit(line);
      return;
    }
    const now = this.#o.now();
    this.tick();
    const outage = this.#outage ?? this.#start(now);
    outage.failures++;
    outage.lastFailureAt = now;
    const key = `${line.level} ${line.message}`;
    const seen = outage.kinds.get(key);
    outage.kinds.set(key, (seen ?? 0) + 1);
    if (seen === undefined) {
      this.#o.emit(line);
      return;
    }
    if (now - outage.lastReminderAt >= this.#remindEveryMs) {
      outage.lastReminderAt = now;
      this.#o.emit({
        level: "warn",
        message: `still failing after ${seconds(now - outage.startedAt)} s (${outage.failures} failed attempts)`,
        fields: { ...line.fields, lastFailure: line.message },
      });
    }
  }

  /** Something worked (a batch was copied): an outage in progress is over. */
  healthy(): void {
    if (this.#outage !== null) this.#recovered(this.#outage, this.#o.now());
  }

  /** Ends an outage whose failures stopped `quietMs` ago; call it now and then. */
  tick(): void {
    const outage = this.#outage;
    if (outage !== null && this.#o.now() - outage.lastFailureAt >= this.#quietMs)
      this.#recovered(outage, outage.lastFailureAt);
  }

  #start(now: number): Outage {
    this.#outage = { startedAt: now, lastFailureAt: now, lastReminderAt: now, failures: 0, kinds: new Map() };
    return this.#outage;
  }

  #recovered(outage: Outage, at: number): void {
    this.#outage = null;
    // A single failure that a retry fixed at once is no outage worth a second line.
    if (outage.failures <= 1) return;
    const first = ([...outage.kinds.keys()][0] ?? "").replace(/^\w+ /, "");
    const what = first.replace(/, retrying$/, "");
    this.#o.emit({
      level: "info",
      message: `${what}: recovered after ${seconds(at - outage.startedAt)} s (${outage.failures} failed attempts)`,
      fields: { seconds: seconds(at - outage.startedAt), failedAttempts: outage.failures },
    });
  }
}

function seconds(ms: number): number {
  return Math.max(0, Math.round(ms / 1000));
}
