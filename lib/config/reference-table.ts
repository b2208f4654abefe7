/**
 * The README's field reference: one Markdown row per config field (path, environment variable,
 * default, description), rendered from configReference() between two markers, so the README's
 * list of fields and variables is the schema's.
 */
import { configReference, type FieldReference } from "./reference.js";

export const REFERENCE_START = "<!-- config-reference:start (npm run docs:config) -->";
export const REFERENCE_END = "<!-- config-reference:end -->";

export function referenceTable(): string {
  const rows = configReference().map(
    (f) => `| \`${f.path}\` | \`${f.variable}\` | ${defaultCell(f)} | ${escapeCell(f.description)} |`,
  );
  return ["| Field | Environment variable | Default | Meaning |", "|---|---|---|---|", ...rows].join("\n");
}

/** `readme` with the text between the markers replaced by the current table. */
export function replaceReferenceBlock(readme: string): string {
  const start = readme.indexOf(REFERENCE_START);
  const end = readme.indexOf(REFERENCE_END);
  if (start < 0 || end < start)
    throw new Error(`README has no ${REFERENCE_START} ... ${REFERENCE_END} block`);
  return `${readme.slice(0, start + REFERENCE_START.length)}\n${referenceTable()}\n${readme.slice(end)}`;
}

function defaultCell(field: FieldReference): string {
  if (field.required) return "required";
  if (field.default === undefined) return "none";
  const text = Array.isArray(field.default) ? field.default.join(", ") : String(field.default);
  return text === "" ? "none (empty list)" : `\`${text}\``;
}

function escapeCell(text: string): string {
  return text.replaceAll("|", "\\|");
}
