/**
 * `kafka-mirror <command>`: parses the command line, runs one command, and turns whatever it
 * throws into one message and an exit code (the stack only with --debug). The commands, their
 * options and their help come from commands/index.ts; nothing here lists them again.
 */
import { parseArgs } from "node:util";
import { describeFailure, ExitCode, failureJson } from "./cli-error.js";
import {
  type CliCommand,
  COMMON_OPTIONS,
  commandHelp,
  parseCommandOptions,
  usageError,
  usageLine,
} from "./command.js";
import { COMMANDS } from "./commands/index.js";
import type { CliIo } from "./console.js";
import { packageVersion } from "./version.js";

const SUMMARY_COLUMN = 40;
const NAME_WIDTH = Math.max(...COMMANDS.map((c) => c.name.length)) + 1;
const SUMMARY_WIDTH = 60;

/** The global usage, derived from every command's name, options and summary. */
export const USAGE = `usage: kafka-mirror <command> [options]

commands:
${COMMANDS.map(commandEntry).join("\n")}

options:
  --help, -h         the usage; after a command, its options, defaults and an example
  --version          the package version
  --debug            verbose logs and stack traces

\`kafka-mirror <command> --help\` lists the options each command takes.
`;

function commandEntry(command: CliCommand): string {
  const head =
    `  ${command.name.padEnd(NAME_WIDTH)}${usageLine(command).slice(`kafka-mirror ${command.name} `.length)}`.trimEnd();
  const summary = wrap(command.summary, SUMMARY_WIDTH).map((line) => `${" ".repeat(SUMMARY_COLUMN)}${line}`);
  if (head.length < SUMMARY_COLUMN - 1) summary[0] = `${head.padEnd(SUMMARY_COLUMN)}${summary[0]?.trim()}`;
  else summary.unshift(head);
  return summary.join("\n");
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line];
}

/** Runs one command line; never throws, returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    return await dispatch(argv, io, signal);
  } catch (error) {
    if (signal.aborted) return ExitCode.INTERRUPTED;
    if (argv.includes("--json")) {
      const { exitCode, json } = failureJson(error, debug);
      io.stderr.write(`${json}\n`);
      return exitCode;
    }
    const { exitCode, message } = describeFailure(error, debug);
    io.stderr.write(`kafka-mirror: ${message}\n`);
    return exitCode;
  }
}

async function dispatch(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const at = commandIndex(argv);
  if (at === undefined) return globalFlags(argv, io);
  const name = argv[at];
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) throw usageError(`unknown command "${name}"`, USAGE);
  const values = parseCommandOptions(command, [...argv.slice(0, at), ...argv.slice(at + 1)]);
  if (values.help) {
    io.stdout.write(commandHelp(command));
    return ExitCode.OK;
  }
  return command.run(values, io, signal);
}

/** Where the command's name is: the first argument that is no option's value. */
function commandIndex(argv: readonly string[]): number | undefined {
  const options = Object.fromEntries(
    COMMANDS.flatMap((c) => Object.entries(c.options)).map(([name, spec]) => [name, { type: spec.type }]),
  );
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  return tokens.find((t) => t.kind === "positional")?.index;
}

const GLOBAL_FLAGS = { ...COMMON_OPTIONS, version: { type: "boolean" } } as const;

/** A command line without a command: `--help`, `--version`, or the usage and exit 2. */
function globalFlags(argv: readonly string[], io: CliIo): number {
  let values: { help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({ args: [...argv], options: GLOBAL_FLAGS, strict: true }));
  } catch (error) {
    throw usageError((error as Error).message, USAGE);
  }
  if (values.version) {
    io.stdout.write(`${packageVersion()}\n`);
    return ExitCode.OK;
  }
  io.stdout.write(USAGE);
  return values.help ? ExitCode.OK : ExitCode.BAD_INPUT;
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
