/**
 * What the operator sees when a command cannot go on: one message naming the problem, a
 * non-zero exit code, and the stack only with --debug.
 */
import { type ErrorCode, isReplicatorError } from "../errors.js";
import { isAuthenticationFailure } from "../kafka/wire/security.js";

/** Exit codes, documented in the README's CLI section. */
export const ExitCode = {
  OK: 0,
  /** The command ran and found a problem: verify mismatch, partitions that failed to copy. */
  FAILED: 1,
  /** Bad command line or config: fix the input and rerun. */
  BAD_INPUT: 2,
  /** A cluster or the lease store could not be reached, or a cluster refused our credentials. */
  UNREACHABLE: 3,
  INTERRUPTED: 130,
} as const;

/** Errors the operator fixes in the command line or the config: rerunning as is cannot help. */
const BAD_INPUT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "CONFIG_INVALID",
  "PATTERN_INVALID",
  "STATE_DIR_UNUSABLE",
  "METRICS_PORT_UNUSABLE",
  "LEASE_STATE_MISSING",
]);

export class CliError extends Error {
  readonly exitCode: number;
  /** The help printed after the message of a bad command line (left out of --json errors). */
  readonly usage: string | undefined;

  constructor(message: string, exitCode: number, options: { cause?: unknown; usage?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.usage = options.usage;
  }
}

/** The exit code and message for anything a command threw. */
export function describeFailure(error: unknown, debug: boolean): { exitCode: number; message: string } {
  const stack = (e: unknown): string => (debug && e instanceof Error && e.stack ? `\n${e.stack}` : "");
  const causes = (e: unknown): string => {
    if (!debug) return "";
    let out = "";
    let cause = e instanceof Error ? e.cause : undefined;
    while (cause !== undefined) {
      out += `\ncaused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`;
      cause = cause instanceof Error ? cause.cause : undefined;
    }
    return out;
  };
  if (error instanceof CliError) {
    const usage = error.usage === undefined ? "" : `\n${error.usage}`;
    return { exitCode: error.exitCode, message: `${error.message}${usage}${stack(error)}${causes(error)}` };
  }
  if (isAuthenticationFailure(error)) {
    // Refused after the reachability check (another broker, a later reconnect): still exit 3.
    const text = error instanceof Error ? error.message : String(error);
    return {
      exitCode: ExitCode.UNREACHABLE,
      message: `authentication failed: ${text}${stack(error)}${causes(error)}`,
    };
  }
  if (isReplicatorError(error)) {
    const exitCode = BAD_INPUT_CODES.has(error.code)
      ? ExitCode.BAD_INPUT
      : error.code === "LEASE_STORE_UNAVAILABLE"
        ? ExitCode.UNREACHABLE
        : ExitCode.FAILED;
    return { exitCode, message: `${error.message} [${error.code}]${stack(error)}${causes(error)}` };
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    exitCode: ExitCode.FAILED,
    message: `unexpected error: ${text}${debug ? stack(error) + causes(error) : " (run with --debug for details)"}`,
  };
}

/**
 * What `--json` prints for a failure: one JSON object (one line) a script can parse, with the
 * exit code, the ReplicatorError code and details when there are some, and no usage text.
 */
export function failureJson(error: unknown, debug: boolean): { exitCode: number; json: string } {
  const { exitCode, message } = describeFailure(error, false);
  const text =
    error instanceof CliError
      ? error.message
      : isReplicatorError(error)
        ? message.replace(` [${error.code}]`, "")
        : message;
  const stack = debug && error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {};
  const object = isReplicatorError(error)
    ? { error: text, exitCode, code: error.code, details: error.details, ...stack }
    : { error: text, exitCode, ...stack };
  try {
    return { exitCode, json: JSON.stringify(object) };
  } catch {
    // Details that do not serialise (a cycle, a BigInt) must not hide the error itself.
    return { exitCode, json: JSON.stringify({ error: text, exitCode }) };
  }
}
