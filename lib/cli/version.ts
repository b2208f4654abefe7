/** The package's version, for `kafka-mirror --version`. */
import { readFileSync } from "node:fs";

/**
 * The version in the package.json above this module: `../../package.json` from lib/cli/ in the
 * repository, `../package.json` from dist/ in an installed package.
 */
export function packageVersion(from: URL = new URL(import.meta.url)): string {
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, from), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "kafka-mirror" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // Not this one: the next level up.
    }
  }
  return "unknown";
}
