/**
 * A cluster secret's JSON, checked: `username`, `password` (SASL PLAIN/SCRAM) and PEM `ca`,
 * `cert`, `key` (TLS), all optional strings. Unknown keys are refused so a misspelt key does
 * not silently drop a credential; the error names keys, never values.
 */

import type { ClusterCredentials } from "../config/credentials.js";
import { ReplicatorError } from "../errors.js";

const KEYS = ["username", "password", "ca", "cert", "key"] as const;

export function parseClusterCredentials(
  secret: Record<string, unknown>,
  secretArn: string,
): ClusterCredentials {
  const problems: string[] = [];
  const credentials: Record<string, string> = {};
  for (const [name, value] of Object.entries(secret)) {
    if (!(KEYS as readonly string[]).includes(name)) {
      problems.push(`unknown key "${name}"; allowed: ${KEYS.join(", ")}`);
    } else if (typeof value !== "string" || value === "") {
      problems.push(`"${name}" must be a non-empty string`);
    } else {
      credentials[name] = value;
    }
  }
  if (problems.length > 0) {
    throw new ReplicatorError("CONFIG_INVALID", `secret ${secretArn}: ${problems.join("; ")}`, {
      details: { secretArn, problems },
    });
  }
  return credentials;
}
