/**
 * Builds the config from environment variables, the way Lambda functions and CloudFormation
 * parameters deliver it. Every field has its own variable, named from its path:
 * `source.requestTimeoutMs` is `KAFKA_MIRROR_SOURCE_REQUEST_TIMEOUT_MS`. `KAFKA_MIRROR_CONFIG`
 * may hold a whole JSON document; single variables override its fields.
 *
 * An empty variable counts as unset (a CloudFormation parameter can only be left empty), so
 * the field keeps its default. A `KAFKA_MIRROR_*` variable that names no field is refused like
 * an unknown key: a misspelt variable would otherwise be a silently ignored setting.
 */
import { ReplicatorError } from "../errors.js";
import { describeValue } from "./fields.js";
import { CONFIG_FIELDS, type MirrorConfig, parseConfig } from "./schema.js";

export const ENV_PREFIX = "KAFKA_MIRROR_";

/** The variable holding a whole JSON config document. */
export const CONFIG_DOCUMENT_VARIABLE = `${ENV_PREFIX}CONFIG`;

/** `source`, `requestTimeoutMs` → `KAFKA_MIRROR_SOURCE_REQUEST_TIMEOUT_MS`. */
export function envVariableName(section: string, key: string): string {
  const snake = `${section}_${key}`.replace(/([a-z0-9])([A-Z])/g, "$1_$2");
  return `${ENV_PREFIX}${snake.toUpperCase()}`;
}

export interface LoadConfigOptions {
  /** Other `KAFKA_MIRROR_*` variables the caller reads itself, which are not config fields. */
  readonly otherVariables?: readonly string[];
}

/** Throws ReplicatorError CONFIG_INVALID naming every bad field or variable. */
export function loadConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: LoadConfigOptions = {},
): MirrorConfig {
  const document = readDocument(env[CONFIG_DOCUMENT_VARIABLE]);
  const known = new Set([CONFIG_DOCUMENT_VARIABLE, ...(options.otherVariables ?? [])]);

  for (const [section, keys] of Object.entries(CONFIG_FIELDS)) {
    for (const key of keys) {
      const name = envVariableName(section, key);
      known.add(name);
      const value = env[name];
      if (value === undefined || value === "") continue;
      const current = document[section];
      document[section] = { ...(isPlainObject(current) ? current : {}), [key]: value };
    }
  }

  const unknown = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name))
    .sort();
  if (unknown.length > 0) {
    const issues = unknown.map((name) => ({
      path: name,
      message: "unknown variable: names no config field",
    }));
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid config: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
      { details: { issues } },
    );
  }
  return parseConfig(document);
}

function readDocument(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalid(`not valid JSON: ${reason}`, error);
  }
  if (!isPlainObject(parsed)) throw invalid(`expected a JSON object, got ${describeValue(parsed)}`);
  return { ...parsed };
}

function invalid(message: string, cause?: unknown): ReplicatorError {
  const issues = [{ path: CONFIG_DOCUMENT_VARIABLE, message }];
  return new ReplicatorError("CONFIG_INVALID", `invalid config: ${CONFIG_DOCUMENT_VARIABLE}: ${message}`, {
    cause,
    details: { issues },
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
