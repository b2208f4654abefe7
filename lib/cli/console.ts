/**
 * The CLI's output: where it goes, whether it is a terminal (progress bars and redrawn tables)
 * or not (plain lines). The CLI's Logger is in cli-logger.ts.
 */
import type { Writable } from "node:stream";

export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean; columns?: number };
  readonly stderr: Writable;
}

export function isTerminal(io: CliIo): boolean {
  return io.stdout.isTTY === true && process.env.TERM !== "dumb";
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
