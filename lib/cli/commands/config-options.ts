/**
 * The options of every command that reads a config file (all but `demo`), and the checked
 * GlobalOptions they become.
 */
import { resolve } from "node:path";
import { LEASE_STORES, type LeaseStoreKind } from "../../wiring.js";
import { isLogFormat, LOG_FORMATS, type LogFormat } from "../cli-logger.js";
import { type CliCommand, commandHelp, type OptionSpecs, type OptionValues, usageError } from "../command.js";
import { DEFAULT_STATE_DIR, defaultStateDir, isLeaseStoreKind, leaseStoreServes } from "../leases.js";
import type { GlobalOptions } from "./context.js";

export const CONFIG_OPTIONS = {
  config: { type: "string", arg: "FILE", required: true, help: "YAML or JSON, the functions' config schema" },
  "state-dir": {
    type: "string",
    arg: "DIR",
    help: "embedded lease store directory",
    default: `${DEFAULT_STATE_DIR}/ next to the config file`,
  },
  "lease-store": {
    type: "string",
    arg: "KIND",
    help:
      "embedded; dynamodb: the table leases.table in DynamoDB\n" +
      "(AWS_REGION, AWS credentials, AWS_ENDPOINT_URL_DYNAMODB as the SDK reads them);\n" +
      "memory (run only): in this process, gone when it ends, shared with no other",
    default: "embedded",
  },
  json: { type: "boolean", help: "machine-readable output (an error too: one JSON object on stderr)" },
  "log-format": {
    type: "string",
    arg: "FORMAT",
    help: "text, or json: one object per line with the functions' keys (level, message, timestamp, service)",
    default: "text",
  },
} as const satisfies OptionSpecs;

/** The checked options every config command gets; `command` names it in messages. */
export function globalOptions(
  command: CliCommand,
  values: OptionValues<typeof CONFIG_OPTIONS> & { readonly debug?: boolean },
  signal: AbortSignal,
): GlobalOptions {
  if (values.config === undefined)
    throw usageError(`${command.name} needs --config FILE`, commandHelp(command));
  return {
    config: values.config,
    json: values.json ?? false,
    debug: values.debug ?? false,
    logFormat: logFormatOption(values["log-format"], command),
    stateDir:
      values["state-dir"] === undefined ? defaultStateDir(values.config) : resolve(values["state-dir"]),
    leaseStore: leaseStoreOption(values["lease-store"], command),
    signal,
  };
}

function logFormatOption(value: string | undefined, command: CliCommand): LogFormat {
  const format = value ?? "text";
  if (!isLogFormat(format))
    throw usageError(
      `--log-format must be one of ${LOG_FORMATS.join(", ")}, got "${format}"`,
      commandHelp(command),
    );
  return format;
}

function leaseStoreOption(value: string | undefined, command: CliCommand): LeaseStoreKind {
  const kind = value ?? "embedded";
  if (!isLeaseStoreKind(kind)) {
    throw usageError(
      `--lease-store must be one of ${LEASE_STORES.join(", ")}, got "${kind}"`,
      commandHelp(command),
    );
  }
  if (!leaseStoreServes(kind, command.name)) {
    throw usageError(
      `--lease-store memory keeps leases inside one run's process; ${command.name} would see an empty table`,
      commandHelp(command),
    );
  }
  return kind;
}
