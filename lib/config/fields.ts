/**
 * Field builders for the config schema. Each one refuses bad input with a message that says
 * what was wrong and what is allowed, because the operator reading it has only the message.
 *
 * Numbers and booleans also accept their canonical string form ("30000", "true"): environment
 * variables and CloudFormation parameters deliver everything as strings, and a config that
 * passes through them must not need a type-juggling layer of its own.
 */
import { z } from "zod";
import { compileTopicPattern } from "../topics/pattern.js";

/** A short, single-line rendering of a refused value for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (typeof value === "function" || typeof value === "symbol") return typeof value;
  const json = JSON.stringify(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** A strict object: unknown keys are refused, naming the keys that are allowed. */
export function section<Shape extends z.core.$ZodLooseShape>(shape: Shape) {
  const allowed = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code === "unrecognized_keys") return `unknown key; allowed: ${allowed}`;
      if (issue.input === undefined) return `required: an object with ${allowed}`;
      return `expected an object with ${allowed}, got ${describeValue(issue.input)}`;
    },
  });
}

/** An integer in [min, max]; also accepts its decimal string form. */
export function integer(min: number, max: number) {
  const expected = `an integer from ${min} to ${max}`;
  const error = (issue: { input?: unknown }) => `expected ${expected}, got ${describeValue(issue.input)}`;
  return z.preprocess(
    fromIntegerString,
    z.number({ error }).int({ error }).min(min, { error }).max(max, { error }),
  );
}

export function flag() {
  return z.preprocess(
    (value) => (value === "true" ? true : value === "false" ? false : value),
    z.boolean({ error: (issue) => `expected true or false, got ${describeValue(issue.input)}` }),
  );
}

export function oneOf<const Values extends readonly [string, ...string[]]>(values: Values) {
  return z.enum(values, {
    error: (issue) => `got ${describeValue(issue.input)}, allowed: ${values.join(", ")}`,
  });
}

/** A string of min..max characters matching `pattern`, described as `what` in errors. */
export function token(pattern: RegExp, min: number, max: number, what: string) {
  const error = (issue: { input?: unknown }) =>
    `expected ${what} (${min} to ${max} characters), got ${describeValue(issue.input)}`;
  return z.string({ error }).min(min, { error }).max(max, { error }).regex(pattern, { error });
}

/** A local file's path (absolute, or relative to the working directory); read when it is needed. */
export function filePath() {
  const error = (issue: { input?: unknown }) => `expected a file path, got ${describeValue(issue.input)}`;
  return z.string({ error }).min(1, { error }).max(4096, { error });
}

// Host names (RFC 1123 labels, plus "_" which some internal DNS uses) and IPv4 addresses.
// IPv6 literals are left out: kafkajs splits broker addresses on ":".
const HOST_PORT =
  /^((?:[a-zA-Z0-9_](?:[a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_])?\.)*[a-zA-Z0-9_](?:[a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_])?):(\d{1,5})$/;

/**
 * A non-empty list of "host:port" broker addresses. One comma-separated string is accepted too
 * ("a:9092,b:9092", as bootstrap.servers is usually written) and becomes a list; blanks around
 * entries and empty entries (a trailing comma) are dropped.
 */
export function brokerList() {
  const broker = z
    .string({ error: (issue) => `expected a "host:port" string, got ${describeValue(issue.input)}` })
    .trim()
    .check((ctx) => {
      const match = HOST_PORT.exec(ctx.value);
      const port = Number(match?.[2]);
      if (match === null || port < 1 || port > 65535) {
        ctx.issues.push({
          code: "custom",
          input: ctx.value,
          message: `expected "host:port" (host name or IPv4 address, port 1-65535), got ${describeValue(ctx.value)}`,
        });
      }
    });
  const atLeastOne = (issue: { input?: unknown }) =>
    `expected at least one "host:port" broker, got ${describeValue(issue.input)}`;
  return z.preprocess(commaSeparated, z.array(broker, { error: atLeastOne }).min(1, { error: atLeastOne }));
}

/**
 * An optional whole-name topic pattern, compiled when the config is parsed so a typo fails the
 * deployment rather than the first run. An empty string counts as absent: a CloudFormation
 * parameter cannot be unset, only left empty.
 */
export function topicPattern() {
  return z.preprocess((value) => (value === "" ? undefined : value), patternString().optional());
}

/** A topicPattern that must be given: `what` says what it selects, for the message when it is not. */
export function requiredTopicPattern(what: string) {
  return z.preprocess(
    (value) => (value === "" ? undefined : value),
    patternString(`required: a whole-name regular expression of ${what} (".*" for all), got none`),
  );
}

function patternString(whenAbsent?: string) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined && whenAbsent !== undefined
          ? whenAbsent
          : `expected a regular expression string, got ${describeValue(issue.input)}`,
    })
    .check((ctx) => {
      const compiled = compileTopicPattern(ctx.value);
      if (!compiled.ok) ctx.issues.push({ code: "custom", input: ctx.value, message: compiled.reason });
    });
}

/**
 * A list of Kafka config names ("retention.ms"): a list, or one comma-separated string as an
 * environment variable or CloudFormation parameter delivers it. Blanks and empty entries are
 * dropped, so "" is the empty list.
 */
export function configNameList() {
  const name = z
    .string({ error: (issue) => `expected a config name string, got ${describeValue(issue.input)}` })
    .trim()
    .regex(/^[a-zA-Z0-9._-]{1,255}$/, {
      error: (issue) => `expected a Kafka config name of [a-zA-Z0-9._-], got ${describeValue(issue.input)}`,
    });
  return z.preprocess(
    commaSeparated,
    z.array(name, { error: (issue) => `expected a list of config names, got ${describeValue(issue.input)}` }),
  );
}

/** One comma-separated string (an environment variable, a parameter) as its trimmed, non-empty entries. */
function commaSeparated(value: unknown): unknown {
  return typeof value === "string"
    ? value
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry !== "")
    : value;
}

function fromIntegerString(value: unknown): unknown {
  return typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
}
