/**
 * Every config field as an operator looks it up: its path, environment variable, default and
 * description, all read from the schema (its `.describe()` texts and what a parse fills in), so
 * `kafka-mirror init` and the README's field reference cannot drift from it.
 */
import { envVariableName } from "./load.js";
import { CONFIG_SECTIONS, mirrorConfigSchema } from "./schema.js";

export interface FieldReference {
  readonly section: string;
  readonly key: string;
  /** `source.brokers` */
  readonly path: string;
  /** `KAFKA_MIRROR_SOURCE_BROKERS` */
  readonly variable: string;
  /** What a parse fills in when the field is absent; undefined when it stays absent. */
  readonly default: unknown;
  /** No default: a config without it is refused. */
  readonly required: boolean;
  readonly description: string;
}

/** A config with only the required fields, so that a parse shows every default. */
const REQUIRED_ONLY = {
  source: { brokers: "source:9092" },
  target: { brokers: "target:9092" },
  topics: { whitelist: ".*" },
};

export function configReference(): FieldReference[] {
  const defaults = mirrorConfigSchema.parse(REQUIRED_ONLY) as unknown as Record<
    string,
    Record<string, unknown>
  >;
  const required = requiredPaths();
  return Object.entries(CONFIG_SECTIONS).flatMap(([section, schema]) =>
    Object.entries(schema.shape).map(([key, field]) => {
      const path = `${section}.${key}`;
      const isRequired = required.has(path);
      return {
        section,
        key,
        path,
        variable: envVariableName(section, key),
        default: isRequired ? undefined : defaults[section]?.[key],
        required: isRequired,
        description: (field as { description?: string }).description ?? "",
      };
    }),
  );
}

/** The paths a parse of empty sections names: the fields without a default. */
function requiredPaths(): Set<string> {
  const result = mirrorConfigSchema.safeParse({ source: {}, target: {} });
  const issues = result.success ? [] : result.error.issues;
  return new Set(issues.map((issue) => issue.path.join(".")));
}
