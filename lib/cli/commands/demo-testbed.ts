/**
 * Whether `demo` can start its clusters here: they are the test bed's (librdkafka's mock,
 * built from source by the repository's scripts/setup-testbed.sh), which an installed package
 * does not have. The message says what is true where the command runs.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MOCK_KAFKA_BINARY } from "../../../test/helpers/mock-kafka.js";
import { CliError, ExitCode } from "../cli-error.js";

/** The repository checkout this code runs from, or null (an installed package: dist/cli.js). */
export function repositoryRoot(from = fileURLToPath(import.meta.url)): string | null {
  for (let dir = dirname(from); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "scripts", "setup-testbed.sh"))) return dir;
  }
  return null;
}

/** Throws a CliError saying how to get the test bed, when its mock Kafka launcher is missing. */
export function requireTestbed(binary = MOCK_KAFKA_BINARY, root = repositoryRoot()): void {
  if (existsSync(binary)) return;
  if (root !== null) {
    throw new CliError(
      `demo needs the local test bed, which is not built (${binary} is missing): run \`npm run setup:testbed\` ` +
        "in the repository (`npm run demo` runs it first)",
      ExitCode.FAILED,
    );
  }
  throw new CliError(
    "demo needs the local test bed (librdkafka's mock Kafka, built from source), which only a clone of the " +
      "kafka-mirror repository has: there, run `npm ci && npm run demo`. This installed CLI works against your " +
      "own clusters: `kafka-mirror init --output mirror.yaml`, fill in the brokers and whitelist, then " +
      "`kafka-mirror plan --config mirror.yaml`",
    ExitCode.FAILED,
  );
}
