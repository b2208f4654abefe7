/**
 * `kafka-mirror init [--output FILE]`: the example config with every field, its default, its
 * environment variable and one line of help (lib/config/example.ts, derived from the schema).
 * The required fields are written commented out, so the file as written is refused naming them.
 */
import { writeFile } from "node:fs/promises";
import { exampleConfigYaml } from "../../config/example.js";
import { fileErrorReason } from "../../config/file-error.js";
import { CliError, ExitCode } from "../cli-error.js";
import { type CliCommand, defineCommand } from "../command.js";
import type { CliIo } from "../console.js";

export async function initCommand(output: string | undefined, io: CliIo): Promise<number> {
  const yaml = exampleConfigYaml();
  if (output === undefined) {
    io.stdout.write(yaml);
    return ExitCode.OK;
  }
  try {
    // "wx": an existing config is somebody's settings; never overwrite it.
    await writeFile(output, yaml, { flag: "wx", mode: 0o644 });
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === "EEXIST"
        ? "it exists (init never overwrites a file; choose another --output or remove it)"
        : fileErrorReason(error);
    throw new CliError(`cannot write ${output}: ${why}`, ExitCode.BAD_INPUT, { cause: error });
  }
  io.stdout.write(
    `wrote ${output}: uncomment and fill in source.brokers, target.brokers and topics.whitelist, ` +
      `then: kafka-mirror plan --config ${output}\n`,
  );
  return ExitCode.OK;
}

export const INIT_COMMAND: CliCommand = defineCommand({
  name: "init",
  summary: "write an example config: every field, its default, its variable and help",
  options: {
    output: {
      type: "string",
      arg: "FILE",
      help: "write it here (never over an existing file)",
      default: "stdout",
    },
  },
  example: "kafka-mirror init --output mirror.yaml",
  run: (values, io) => initCommand(values.output, io),
});
