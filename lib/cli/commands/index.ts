/** Every CLI command, in the order the global usage lists them. */
import type { CliCommand } from "../command.js";
import { DEMO_COMMAND } from "./demo.js";
import { FAILOVER_COMMAND } from "./failover.js";
import { INIT_COMMAND } from "./init.js";
import { OFFSETS_COMMAND } from "./offsets.js";
import { PLAN_COMMAND } from "./plan.js";
import { RUN_COMMAND } from "./run.js";
import { STATUS_COMMAND } from "./status.js";
import { STOP_STORE_COMMAND } from "./stop-store.js";
import { VERIFY_COMMAND } from "./verify.js";

export const COMMANDS: readonly CliCommand[] = [
  DEMO_COMMAND,
  INIT_COMMAND,
  RUN_COMMAND,
  STATUS_COMMAND,
  VERIFY_COMMAND,
  PLAN_COMMAND,
  OFFSETS_COMMAND,
  FAILOVER_COMMAND,
  STOP_STORE_COMMAND,
];
