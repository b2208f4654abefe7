/**
 * The example config `kafka-mirror init` writes: every field under its section, with its default
 * and its description as comments, derived from the schema (reference.ts). Fields with a default
 * are written set to it; optional fields without one, and the required ones, are written
 * commented out, so the file as written is refused naming exactly the required fields.
 */
import { configReference, type FieldReference } from "./reference.js";

const WIDTH = 98;

/** What to write for each required field once it is uncommented. */
const REQUIRED_EXAMPLES: Readonly<Record<string, string>> = {
  "source.brokers": "source-kafka-1:9092,source-kafka-2:9092",
  "target.brokers": "target-kafka-1:9092",
  "topics.whitelist": '"orders|payments"',
};

export function exampleConfigYaml(): string {
  const fields = configReference();
  const sections = [...new Set(fields.map((f) => f.section))];
  const body = sections.map((section) =>
    [`${section}:`, ...fields.filter((f) => f.section === section).flatMap(fieldLines)].join("\n"),
  );
  return `${header()}\n${body.join("\n\n")}\n`;
}

function header(): string {
  return comment(
    "kafka-mirror config: every field with its default. Fill in the REQUIRED fields " +
      "(source.brokers, target.brokers, topics.whitelist: uncomment them), change what you need and " +
      "delete the rest if you like: an absent field takes the default shown. Each field's " +
      "environment variable, when set and not empty, wins over this file.",
    "",
  );
}

function fieldLines(field: FieldReference): string[] {
  const indent = "  ";
  const status = field.required
    ? "REQUIRED"
    : field.default === undefined
      ? "optional, no default"
      : `default ${JSON.stringify(field.default)}`;
  const lines = [comment(field.description, indent), `${indent}# ${status}; environment: ${field.variable}`];
  if (field.required) lines.push(`${indent}# ${field.key}: ${REQUIRED_EXAMPLES[field.path] ?? ""}`);
  else if (field.default === undefined) lines.push(`${indent}# ${field.key}:`);
  else lines.push(`${indent}${field.key}: ${JSON.stringify(field.default)}`);
  return lines;
}

/** `text` as `# ` lines of at most WIDTH characters. */
function comment(text: string, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + 2 + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return [...lines, line].map((l) => `${indent}# ${l}`).join("\n");
}
