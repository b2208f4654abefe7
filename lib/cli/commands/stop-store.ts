/**
 * `kafka-mirror stop-store (--config FILE | --state-dir DIR)`: stops the embedded lease store's
 * background server of a state directory (the config's own, next to it, as the other commands
 * find it) now, instead of after its 10 idle minutes. The checkpoints stay on disk; the next
 * command that needs the store starts it again.
 */
import { resolve } from "node:path";
import { DEFAULT_IDLE_MS, stopLeaseServer } from "../../dynamodb/embedded/ensure.js";
import { ExitCode } from "../cli-error.js";
import { type CliCommand, commandHelp, defineCommand, usageError } from "../command.js";
import type { CliIo } from "../console.js";
import { defaultStateDir } from "../leases.js";
import { CONFIG_OPTIONS } from "./config-options.js";

export async function stopStoreCommand(stateDir: string, io: CliIo): Promise<number> {
  const stopped = await stopLeaseServer(stateDir);
  if (stopped === null) {
    io.stdout.write(`no embedded lease store runs for ${stateDir}\n`);
  } else {
    const how = stopped.killed ? "killed (it did not stop within 10 s)" : "stopped";
    io.stdout.write(
      `${how} the embedded lease store of ${stateDir} (pid ${stopped.pid}); its checkpoints stay in the directory\n`,
    );
  }
  return ExitCode.OK;
}

export const STOP_STORE_COMMAND: CliCommand = defineCommand({
  name: "stop-store",
  summary: `stop a state directory's embedded lease store now (it exits after ${DEFAULT_IDLE_MS / 60_000} idle minutes)`,
  options: {
    config: { ...CONFIG_OPTIONS.config, required: false, help: "the config whose state directory to stop" },
    "state-dir": CONFIG_OPTIONS["state-dir"],
  },
  example: "kafka-mirror stop-store --config mirror.yaml",
  run: (values, io) => {
    const { config } = values;
    const stateDir = values["state-dir"];
    // No default of its own: the current directory's .kafka-mirror is not where the others look.
    if (stateDir === undefined && config === undefined) {
      throw usageError(
        "stop-store needs --config FILE (its state directory) or --state-dir DIR",
        commandHelp(STOP_STORE_COMMAND),
      );
    }
    return stopStoreCommand(
      stateDir === undefined ? defaultStateDir(config as string) : resolve(stateDir),
      io,
    );
  },
});
