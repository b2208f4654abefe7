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
  /** `KAFKA_MIRROR_*` variables refused with a reason of their own (the variable, the reason). */
  readonly refusedVariables?: Readonly<Record<string, string>>;
}

/** Throws ReplicatorError CONFIG_INVALID naming every bad field or variable. */
export function loadConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: LoadConfigOptions = {},
): MirrorConfig {
  const document = readDocument(env[CONFIG_DOCUMENT_VARIABLE]);
  const otherVariables = [CONFIG_DOCUMENT_VARIABLE, ...(options.otherVariables ?? [])];
  return parseConfig(overlayEnvironment(document, env, { ...options, otherVariables }).document);
}

/**
 * `document` with each field whose variable is set (not empty) replaced by the variable's value:
 * one rule for the functions (over KAFKA_MIRROR_CONFIG) and the CLI (over its file). Returns the
 * variables it applied. Throws CONFIG_INVALID naming every `KAFKA_MIRROR_*` variable that is
 * neither a field's nor in `otherVariables`.
 */
export function overlayEnvironment(
  base: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  options: LoadConfigOptions = {},
): { readonly document: Record<string, unknown>; readonly applied: readonly string[] } {
  const document: Record<string, unknown> = { ...base };
  const known = new Set(options.otherVariables ?? []);
  const applied: string[] = [];
  for (const [section, keys] of Object.entries(CONFIG_FIELDS)) {
    for (const key of keys) {
      const name = envVariableName(section, key);
      known.add(name);
      const value = env[name];
      if (value === undefined || value === "") continue;
      const current = document[section];
      document[section] = { ...(isPlainObject(current) ? current : {}), [key]: value };
      applied.push(name);
    }
  }
  const refused = options.refusedVariables ?? {};
  const issues = Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name))
    .sort()
    .map((name) => ({ path: name, message: refused[name] ?? "unknown variable: names no config field" }));
  if (issues.length > 0) {
    throw new ReplicatorError(
      "CONFIG_INVALID",
      `invalid config: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ")}`,
      { details: { issues } },
    );
  }
  return { document, applied };
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
