/**
 * The shape of one CLI command. Each file in commands/ declares its command once as a
 * `CliCommand` (name, summary, options, example, run); main.ts derives the global usage, the
 * per-command help, the option check and the dispatch from the list in commands/index.ts.
 */
import { parseArgs } from "node:util";
import { CliError, ExitCode } from "./cli-error.js";
import type { CliIo } from "./console.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** The value's placeholder in the usage (`FILE`, `N`); string options only. */
  readonly arg?: string;
  readonly help: string;
  /** Shown as "(default …)" in the command's help. */
  readonly default?: string;
  /** Shown without brackets in the usage line. */
  readonly required?: boolean;
  readonly short?: string;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The parsed values of `O`: a string or a boolean per option, undefined when not given. */
export type OptionValues<O extends OptionSpecs> = {
  readonly [K in keyof O]?: O[K] extends { readonly type: "string" }
    ? string
    : O[K] extends { readonly type: "boolean" }
      ? boolean
      : string | boolean;
};

export interface CliCommand<O extends OptionSpecs = OptionSpecs> {
  readonly name: string;
  /** One line for the global usage. */
  readonly summary: string;
  readonly options: O;
  /** A command line that works, for `<command> --help`. */
  readonly example: string;
  run(values: OptionValues<O & typeof COMMON_OPTIONS>, io: CliIo, signal: AbortSignal): Promise<number>;
}

/** Declares a command; the identity, so `run` sees its own options' types. */
export function defineCommand<const O extends OptionSpecs>(command: CliCommand<O>): CliCommand {
  return command as unknown as CliCommand;
}

/** `--help` and `--debug` are taken by every command. */
export const COMMON_OPTIONS = {
  debug: { type: "boolean", help: "verbose logs and stack traces" },
  help: { type: "boolean", short: "h", help: "this command's usage, options and an example" },
} as const satisfies OptionSpecs;

/** `--config FILE [--once] …`: the command's options, required ones bare. */
export function usageLine(command: CliCommand): string {
  const parts = Object.entries(command.options).map(([name, spec]) => {
    const flag = spec.type === "string" ? `--${name} ${spec.arg ?? "VALUE"}` : `--${name}`;
    return spec.required ? flag : `[${flag}]`;
  });
  return `kafka-mirror ${command.name}${parts.length > 0 ? ` ${parts.join(" ")}` : ""}`;
}

/** What `<command> --help` prints. */
export function commandHelp(command: CliCommand): string {
  const options: OptionSpecs = { ...command.options, ...COMMON_OPTIONS };
  const flags = Object.entries(options).map(([name, spec]) => {
    const flag = spec.short === undefined ? `--${name}` : `--${name}, -${spec.short}`;
    return spec.type === "string" ? `${flag} ${spec.arg ?? "VALUE"}` : flag;
  });
  const width = Math.max(...flags.map((f) => f.length)) + 2;
  const lines = Object.values(options).map((spec, i) => {
    const separator = spec.help.includes("\n") ? "\n" : " ";
    const help = spec.default === undefined ? spec.help : `${spec.help}${separator}(default ${spec.default})`;
    return `  ${(flags[i] ?? "").padEnd(width)}${help.replaceAll("\n", `\n  ${" ".repeat(width)}`)}`;
  });
  return (
    `usage: ${usageLine(command)}\n\n${command.summary}\n\noptions:\n${lines.join("\n")}\n\n` +
    `example:\n  ${command.example}\n`
  );
}

/** A bad command line, followed by `usage` (the command's help or the global usage). */
export function usageError(message: string, usage: string): CliError {
  return new CliError(message, ExitCode.BAD_INPUT, { usage });
}

/**
 * The command's values from `args` (the command line without the command's name). An option
 * the command does not take is refused by name, with the list of those it takes.
 */
export function parseCommandOptions(command: CliCommand, args: readonly string[]): OptionValues<OptionSpecs> {
  const options = { ...command.options, ...COMMON_OPTIONS };
  const spec = Object.fromEntries(
    Object.entries(options).map(([name, o]: [string, OptionSpec]) => [
      name,
      o.short === undefined ? { type: o.type } : { type: o.type, short: o.short },
    ]),
  );
  const { tokens } = parseArgs({
    args: [...args],
    options: spec,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind === "option" && !(token.name in options)) {
      const takes = Object.keys(options).map((name) => `--${name}`);
      throw usageError(
        `${command.name} does not take ${token.rawName}; it takes ${takes.join(", ")}`,
        commandHelp(command),
      );
    }
    if (token.kind === "positional") {
      throw usageError(`unexpected argument "${token.value}"`, commandHelp(command));
    }
  }
  try {
    return parseArgs({ args: [...args], options: spec, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw usageError((error as Error).message, commandHelp(command));
  }
}
