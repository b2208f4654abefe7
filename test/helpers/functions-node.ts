/**
 * The Node release the Lambda functions run on (nodejs22.x, infra/replicator-function.ts), from
 * the test bed (scripts/testbed/fetch-functions-node.sh): the bundle tests run the functions on
 * it, and the bench its worker, so neither measures only the Node that runs the tests.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const FUNCTIONS_NODE = fileURLToPath(new URL("../../.testbed/functions-node/bin/node", import.meta.url));

/** The functions' node binary; throws naming the setup step when the test bed lacks it. */
export function functionsNode(): string {
  if (!existsSync(FUNCTIONS_NODE)) {
    throw new Error(
      `the Lambda functions' Node is not in ${FUNCTIONS_NODE}: run npm run setup:testbed; its fetch-functions-node step says so when it skips this machine (it fetches Node's glibc builds for x64 and arm64 Linux only)`,
    );
  }
  return FUNCTIONS_NODE;
}
