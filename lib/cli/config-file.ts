/**
 * Reads the CLI's config file, YAML or JSON, into the same strict schema the functions use.
 * Each field's KAFKA_MIRROR_* variable, when set and not empty, wins over the file's value (the
 * functions' rule over KAFKA_MIRROR_CONFIG); a KAFKA_MIRROR_* variable that names no field is
 * refused by name. Each way it can fail becomes one CliError naming the file and the problem.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { fileErrorReason } from "../config/file-error.js";
import type { ConfigIssue } from "../config/issues.js";
import { CONFIG_DOCUMENT_VARIABLE, overlayEnvironment } from "../config/load.js";
import { type MirrorConfig, parseConfig } from "../config/schema.js";
import { isReplicatorError } from "../errors.js";
import { credentialVariables } from "../secrets/cluster-security.js";
import { ADAPTER_VARIABLES } from "../wiring.js";
import { CliError, ExitCode } from "./cli-error.js";

/**
 * Variables the CLI reads that are not config fields: the SASL credentials of each side, and
 * those an adapter reads itself (KAFKA_MIRROR_CRC32C).
 */
const OTHER_VARIABLES = [
  ...(["source", "target"] as const).flatMap((side) => Object.values(credentialVariables(side))),
  ...ADAPTER_VARIABLES,
];

const REFUSED_VARIABLES = {
  [CONFIG_DOCUMENT_VARIABLE]:
    "the functions' whole-config variable; the CLI reads --config FILE, with one variable per field over it",
};

export async function loadConfigFile(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<MirrorConfig> {
  const text = await readText(path);
  const document =
    extname(path).toLowerCase() === ".json" ? parseJson(path, text) : parseYamlText(path, text);
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    const got = document === null ? "nothing" : Array.isArray(document) ? "a list" : `a ${typeof document}`;
    throw new CliError(`config file ${path} must hold a mapping of settings, got ${got}`, ExitCode.BAD_INPUT);
  }
  let applied: readonly string[] = [];
  try {
    // A YAML section whose fields are all commented out (as `init` writes them) reads as null:
    // it means "no settings here", not a bad section.
    const sections = Object.fromEntries(Object.entries(document).filter(([, value]) => value !== null));
    const overlaid = overlayEnvironment(sections, env, {
      otherVariables: OTHER_VARIABLES,
      refusedVariables: REFUSED_VARIABLES,
    });
    applied = overlaid.applied;
    return parseConfig(overlaid.document);
  } catch (error) {
    if (isReplicatorError(error, "CONFIG_INVALID")) {
      const issues = (error.details.issues ?? []) as ConfigIssue[];
      const lines = issues.map((issue) => `  ${issue.path}: ${issue.message}`).join("\n");
      const from = applied.length === 0 ? "" : ` with ${applied.join(", ")} from the environment`;
      throw new CliError(`invalid config in ${path}${from}:\n${lines}`, ExitCode.BAD_INPUT, { cause: error });
    }
    throw error;
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const why = fileErrorReason(error);
    throw new CliError(`cannot read config file ${path}: ${why}`, ExitCode.BAD_INPUT, { cause: error });
  }
}

function parseJson(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`invalid JSON in ${path}: ${(error as Error).message}`, ExitCode.BAD_INPUT, {
      cause: error,
    });
  }
}

function parseYamlText(path: string, text: string): unknown {
  try {
    // Unique keys: a key given twice is a mistake, not an override.
    return parseYaml(text, { uniqueKeys: true, prettyErrors: true });
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const at = error.linePos?.[0];
      const where = at === undefined ? "" : ` at line ${at.line}, column ${at.col}`;
      // The first line of yaml's message is the reason; the rest is a source excerpt.
      const reason = error.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? "";
      throw new CliError(`invalid YAML in ${path}${where}: ${reason}`, ExitCode.BAD_INPUT, { cause: error });
    }
    throw error;
  }
}
