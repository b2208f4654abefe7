/**
 * The CLI's output: where it goes, whether it is a terminal (progress bars and redrawn tables)
 * or not (plain lines), and a Logger that keeps library chatter off the operator's screen.
 */
import type { Writable } from "node:stream";
import type { LogFields, Logger } from "../core/ports.js";

export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable;
}

export function isTerminal(io: CliIo): boolean {
  return io.stdout.isTTY === true && process.env.TERM !== "dumb";
}

/** Warnings and errors on stderr; everything with --debug. Fields never hold payloads. */
export class CliLogger implements Logger {
  readonly #io: CliIo;
  readonly #debug: boolean;
  quiet = false;

  constructor(io: CliIo, debug: boolean) {
    this.#io = io;
    this.#debug = debug;
  }
  debug(message: string, fields?: LogFields): void {
    if (this.#debug) this.#write("debug", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    if (this.#debug) this.#write("info", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.#write("warn", message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.#write("error", message, fields);
  }
  #write(level: string, message: string, fields: LogFields | undefined): void {
    if (!this.quiet) this.#io.stderr.write(`[${level}] ${message}${describeFields(fields)}\n`);
  }
}

function describeFields(fields: LogFields | undefined): string {
  if (fields === undefined || Object.keys(fields).length === 0) return "";
  try {
    return ` ${JSON.stringify(fields, (_key, value: unknown) =>
      value instanceof Error ? `${value.name}: ${value.message}` : value,
    )}`;
  } catch {
    return "";
  }
}

/** Left-aligned text columns, right-aligned numbers; `null` cells print as "-". */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  const cells = rows.map((row) => row.map((c) => (c === null ? "-" : typeof c === "number" ? count(c) : c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === "number" || row[i] === null),
  );
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => (numeric[i] ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...cells.map(line)].join("\n");
}

export function progressBar(done: number, total: number, width = 24): string {
  const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

export const count = (n: number): string => n.toLocaleString("en-US");

/** Redraws a block of lines in place on a terminal (cursor up, clear to end of screen). */
export class LiveBlock {
  readonly #io: CliIo;
  #lines = 0;
  constructor(io: CliIo) {
    this.#io = io;
  }
  draw(text: string): void {
    const up = this.#lines > 0 ? `\x1b[${this.#lines}F\x1b[0J` : "";
    this.#io.stdout.write(`${up}${text}\n`);
    this.#lines = text.split("\n").length;
  }
}
