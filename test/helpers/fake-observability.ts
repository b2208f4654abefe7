/**
 * A Logger and ReplicationMetrics that keep what they are told, for assertions.
 */
import type { LogFields, Logger, ReplicationMetrics } from "../../lib/core/ports.js";

export interface LogEntry {
  readonly level: "debug" | "info" | "warn" | "error";
  readonly message: string;
  readonly fields: LogFields;
  /** Date.now() when it was logged, to line it up with another process's log. */
  readonly at: number;
}

export class CapturingLogger implements Logger {
  readonly entries: LogEntry[] = [];
  debug(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "debug", message, fields, at: Date.now() });
  }
  info(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "info", message, fields, at: Date.now() });
  }
  warn(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "warn", message, fields, at: Date.now() });
  }
  error(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: "error", message, fields, at: Date.now() });
  }
  at(level: LogEntry["level"]): LogEntry[] {
    return this.entries.filter((e) => e.level === level);
  }
  /** Every entry above debug, one JSON line each, for a failure's message. */
  story(): string {
    return this.entries
      .filter((e) => e.level !== "debug")
      .map((e) => JSON.stringify({ at: e.at, level: e.level, message: e.message, ...e.fields }))
      .join("\n");
  }
}

export class CapturingMetrics implements ReplicationMetrics {
  readonly batches: Parameters<ReplicationMetrics["batchCopied"]>[0][] = [];
  readonly lost: Parameters<ReplicationMetrics["recordsLost"]>[0][] = [];
  readonly errors: Parameters<ReplicationMetrics["partitionError"]>[0][] = [];
  readonly skipped: { leaseKey: string; attribute: string }[] = [];
  readonly otherWriter: Parameters<NonNullable<ReplicationMetrics["otherWriterSeen"]>>[0][] = [];
  batchCopied(event: Parameters<ReplicationMetrics["batchCopied"]>[0]): void {
    this.batches.push(event);
  }
  recordsLost(event: Parameters<ReplicationMetrics["recordsLost"]>[0]): void {
    this.lost.push(event);
  }
  partitionError(event: Parameters<ReplicationMetrics["partitionError"]>[0]): void {
    this.errors.push(event);
  }
  leaseItemSkipped(event: { leaseKey: string; attribute: string }): void {
    this.skipped.push(event);
  }
  otherWriterSeen(event: Parameters<NonNullable<ReplicationMetrics["otherWriterSeen"]>>[0]): void {
    this.otherWriter.push(event);
  }
}
