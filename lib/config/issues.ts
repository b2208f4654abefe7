/**
 * Turns zod issues into one line per bad field, addressed by dotted path
 * (`source.brokers[1]`, `topics.whitelist`), so an operator can find each one in their file.
 */
import type { z } from "zod";

export interface ConfigIssue {
  /** Dotted path of the field, `config` for the document itself. */
  readonly path: string;
  readonly message: string;
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.flatMap((issue) =>
    // One line per unknown key, at the key's own path: that is where the typo is.
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: issue.message }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out === "" ? "config" : out;
}
