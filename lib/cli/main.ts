/**
 * `kafka-mirror <command>`: parses the command line, runs one command, and turns whatever it
 * throws into one message and an exit code (the stack only with --debug).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { CliError, describeFailure, ExitCode } from "./cli-error.js";
import type { CliIo } from "./console.js";
import {
  DEFAULT_STATE_DIR,
  isLeaseStoreKind,
  LEASE_STORES,
  type LeaseStoreKind,
  leaseStoreServes,
} from "./leases.js";

export const USAGE = `usage: kafka-mirror <command> [options]

commands:
  demo                                  two local clusters, sample traffic, three workers, verify
  run     --config FILE [--once] [--state-dir DIR] [--lease-store KIND] [--worker-id ID]
                                        mirror with the Lambda's worker code, in this process
  status  --config FILE [--json] [--state-dir DIR] [--lease-store KIND]
                                        owner, checkpoint, log end and lag of every partition
  verify  --config FILE [--json] [--from-offset N]
                                        compare source and target; exit 1 on any mismatch
  plan    --config FILE [--json]        which topics are selected, and what the target lacks
  offsets --config FILE [--group REGEX] [--json]
                                        consumer groups: source committed, exact target
                                        translation, target committed, records not yet copied
  failover --config FILE --group G [--dry-run] [--force] [--json]
                                        commit G's final translation on the target (refused,
                                        exit 1, while G has members there); prints the RPO

options:
  --config FILE      YAML or JSON, the functions' config schema
  --state-dir DIR    embedded lease store directory (default ${DEFAULT_STATE_DIR}/)
  --lease-store KIND embedded (default); dynamodb: the table leases.table in DynamoDB
                     (AWS_REGION, AWS credentials, AWS_ENDPOINT_URL_DYNAMODB as the SDK reads them);
                     memory (run only): in this process, gone when it ends, shared with no other
  --json             machine-readable output
  --debug            verbose logs and stack traces
`;

const OPTIONS = {
  config: { type: "string" },
  "state-dir": { type: "string" },
  "lease-store": { type: "string" },
  "worker-id": { type: "string" },
  "from-offset": { type: "string" },
  group: { type: "string" },
  "dry-run": { type: "boolean" },
  force: { type: "boolean" },
  once: { type: "boolean" },
  json: { type: "boolean" },
  debug: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const COMMANDS = ["demo", "run", "status", "verify", "plan", "offsets", "failover"] as const;
type Command = (typeof COMMANDS)[number];

/** Runs one command line; never throws, returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    return await dispatch(argv, io, signal);
  } catch (error) {
    if (signal.aborted) return ExitCode.INTERRUPTED;
    const { exitCode, message } = describeFailure(error, debug);
    io.stderr.write(`kafka-mirror: ${message}\n`);
    return exitCode;
  }
}

type ParsedArgs = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
type Values = ParsedArgs["values"];

async function dispatch(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.help || positionals.length === 0) {
    io.stdout.write(USAGE);
    return values.help ? ExitCode.OK : ExitCode.BAD_INPUT;
  }
  const command = commandName(positionals);
  if (command === "demo") {
    const { demoCommand } = await import("./commands/demo.js");
    return demoCommand({ debug: values.debug ?? false, signal }, io);
  }
  return runConfigCommand(command, values, io, signal);
}

function parseCommandLine(argv: readonly string[]): ParsedArgs {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

function commandName(positionals: readonly string[]): Command {
  const [name, ...extra] = positionals;
  if (!COMMANDS.includes(name as Command)) throw usageError(`unknown command "${name}"`);
  if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`);
  return name as Command;
}

/** The commands that read a config file and use the lease store. */
async function runConfigCommand(
  command: Exclude<Command, "demo">,
  values: Values,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (values.config === undefined) throw usageError(`${command} needs --config FILE`);
  const leaseStore = leaseStoreOption(values["lease-store"], command);
  const global = {
    config: values.config,
    json: values.json ?? false,
    debug: values.debug ?? false,
    stateDir: resolve(values["state-dir"] ?? DEFAULT_STATE_DIR),
    leaseStore,
    signal,
  };
  switch (command) {
    case "run": {
      const { runCommand } = await import("./commands/run.js");
      const workerId = values["worker-id"];
      return runCommand({ ...global, once: values.once ?? false, ...(workerId ? { workerId } : {}) }, io);
    }
    case "status": {
      const { statusCommand } = await import("./commands/status.js");
      return statusCommand(global, io);
    }
    case "verify": {
      const { verifyCommand } = await import("./commands/verify.js");
      const from = values["from-offset"];
      if (from !== undefined && !/^\d+$/.test(from)) {
        throw usageError(`--from-offset must be a non-negative integer, got "${from}"`);
      }
      return verifyCommand({ ...global, ...(from === undefined ? {} : { fromOffset: Number(from) }) }, io);
    }
    case "plan": {
      const { planCommand } = await import("./commands/plan.js");
      return planCommand(global, io);
    }
    case "offsets": {
      const { offsetsCommand } = await import("./commands/offsets.js");
      return offsetsCommand(
        { ...global, ...(values.group === undefined ? {} : { group: values.group }) },
        io,
      );
    }
    case "failover": {
      if (values.group === undefined || values.group === "") throw usageError("failover needs --group G");
      const { failoverCommand } = await import("./commands/failover.js");
      const flags = { dryRun: values["dry-run"] ?? false, force: values.force ?? false };
      return failoverCommand({ ...global, group: values.group, ...flags }, io);
    }
  }
}

function leaseStoreOption(value: string | undefined, command: string): LeaseStoreKind {
  const kind = value ?? "embedded";
  if (!isLeaseStoreKind(kind)) {
    throw usageError(`--lease-store must be one of ${LEASE_STORES.join(", ")}, got "${kind}"`);
  }
  if (!leaseStoreServes(kind, command)) {
    throw usageError(
      `--lease-store memory keeps leases inside one run's process; ${command} would see an empty table`,
    );
  }
  return kind;
}

function usageError(message: string): CliError {
  return new CliError(`${message}\n${USAGE}`, ExitCode.BAD_INPUT);
}

/** The process entry: Ctrl-C aborts the command, which then cleans up and exits 130. */
export async function main(): Promise<never> {
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const code = await runCli(
    process.argv.slice(2),
    { stdout: process.stdout, stderr: process.stderr },
    abort.signal,
  );
  // Explicit exit: a socket or timer some library left behind must not keep the CLI running.
  process.exit(code);
}
