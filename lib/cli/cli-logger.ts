/**
 * The CLI's Logger: warnings and errors on stderr (everything with --debug), each line with its
 * time, as text or (`--log-format json`) as the functions' Powertools JSON, so one log pipeline
 * reads both. The failures of an outage are folded into a first line and a "recovered" line
 * (outage-fold.ts). Fields never hold payloads.
 */
import type { LogFields, Logger } from "../core/ports.js";
import type { CliIo } from "./console.js";
import { type FoldedLine, OutageFold } from "./outage-fold.js";

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

export interface CliLoggerOptions {
  readonly debug: boolean;
  /** @default text */
  readonly format?: LogFormat | undefined;
  /** @default Date.now */
  readonly now?: () => number;
}

/** The `service` key of JSON lines: the functions' (POWERTOOLS_SERVICE_NAME), else kafka-mirror. */
export function cliServiceName(env: NodeJS.ProcessEnv = process.env): string {
  return env.POWERTOOLS_SERVICE_NAME ?? "kafka-mirror";
}

/** How often a quiet outage is checked for its end; unref'd, it never keeps the CLI alive. */
const FOLD_TICK_MS = 1_000;

export class CliLogger implements Logger {
  readonly #io: CliIo;
  readonly #debug: boolean;
  readonly #format: LogFormat;
  readonly #now: () => number;
  readonly #service = cliServiceName();
  readonly #fold: OutageFold;
  readonly #ticker: NodeJS.Timeout;
  quiet = false;

  constructor(io: CliIo, options: CliLoggerOptions) {
    this.#io = io;
    this.#debug = options.debug;
    this.#format = options.format ?? "text";
    this.#now = options.now ?? Date.now;
    this.#fold = new OutageFold({ now: this.#now, emit: (line) => this.#emit(line) });
    this.#ticker = setInterval(() => this.#fold.tick(), FOLD_TICK_MS).unref();
  }

  get format(): LogFormat {
    return this.#format;
  }
  debug(message: string, fields?: LogFields): void {
    if (this.#debug) this.#write(this.#io.stderr, "debug", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    if (this.#debug) this.#write(this.#io.stderr, "info", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.#fold.log({ level: "warn", message, fields: fields ?? {} });
  }
  error(message: string, fields?: LogFields): void {
    this.#fold.log({ level: "error", message, fields: fields ?? {} });
  }
  /**
   * A line the operator always sees on stdout (progress), with its time; `fields` (what the
   * message says, as numbers) only in JSON, where a script reads them.
   */
  notice(message: string, fields?: LogFields): void {
    this.#write(this.#io.stdout, "info", message, this.#format === "json" ? fields : undefined);
  }
  /** Something worked (records were copied): an outage being folded is over. */
  healthy(): void {
    this.#fold.healthy();
  }
  /** Ends an outage still being folded, so its "recovered" line is not lost. */
  close(): void {
    clearInterval(this.#ticker);
    this.#fold.tick();
  }

  #emit(line: FoldedLine): void {
    this.#write(this.#io.stderr, line.level, line.message, line.fields);
  }
  #write(to: CliIo["stderr"], level: string, message: string, fields: LogFields | undefined): void {
    if (this.quiet) return;
    const timestamp = new Date(this.#now()).toISOString();
    to.write(
      this.#format === "json"
        ? `${jsonLine({ level: level.toUpperCase(), message, timestamp, service: this.#service }, fields)}\n`
        : `${timestamp} [${level}] ${message}${describeFields(fields)}\n`,
    );
  }
}

/** An error as `Name: message` (never its stack or its request data). */
function plain(_key: string, value: unknown): unknown {
  return value instanceof Error ? `${value.name}: ${value.message}` : value;
}

function describeFields(fields: LogFields | undefined): string {
  if (fields === undefined || Object.keys(fields).length === 0) return "";
  try {
    return ` ${JSON.stringify(fields, plain)}`;
  } catch {
    return "";
  }
}

/** Powertools' keys first; a field never replaces one of them. */
function jsonLine(head: Record<string, string>, fields: LogFields | undefined): string {
  try {
    const rest = Object.entries(fields ?? {}).filter(([key]) => !(key in head));
    return JSON.stringify({ ...head, ...Object.fromEntries(rest) }, plain);
  } catch {
    return JSON.stringify(head);
  }
}
