/**
 * The shape of the lease table, in one place: its key, how a topic-partition becomes a key, how
 * to create the table (tests and the CLI), and how to check that an existing table fits.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  type TableDescription,
} from "@aws-sdk/client-dynamodb";
import { systemClock } from "../core/clock.js";
import { KEY_ATTRIBUTE } from "../core/lease/table.js";
import type { Clock } from "../core/ports.js";
import { type BackoffPolicy, isRetryable, retryUntil } from "../core/retry.js";
import { ReplicatorError } from "../errors.js";
import { translateDynamoDbError } from "./errors.js";

/** The only key attribute: a string partition key, no sort key (one item per partition). */
export const LEASE_KEY_ATTRIBUTE = KEY_ATTRIBUTE;

/** The wait for a new table to become ACTIVE is bounded so a stuck table fails a deploy, not hangs it. */
const ACTIVE_WAIT_MS = 300_000;
/** How often to look while it is not ACTIVE yet (the SDK waiter's 1 to 5 s). */
const ACTIVE_POLL: BackoffPolicy = { initialMs: 1_000, maxMs: 5_000 };

/**
 * Creates the lease table with on-demand billing and waits until it is ACTIVE. A table that
 * already exists is fine as long as it has the expected key schema; otherwise this throws
 * LEASE_STORE_INVALID.
 */
export async function createLeaseTable(
  client: DynamoDBClient,
  tableName: string,
  clock: Clock = systemClock,
): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: LEASE_KEY_ATTRIBUTE, AttributeType: "S" }],
        KeySchema: [{ AttributeName: LEASE_KEY_ATTRIBUTE, KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      }),
    );
  } catch (error) {
    // Two workers or a CLI and a worker may create it at the same moment; the loser checks the
    // winner's table below instead of failing.
    if (!(error instanceof ResourceInUseException)) {
      throw translateDynamoDbError(error, "CreateTable", tableName);
    }
  }
  await untilActive(client, tableName, clock);
}

/**
 * Looks at the table until it is ACTIVE, and checks its shape. Not the SDK's waitUntilTableExists:
 * that one retries every error for its whole wait, a refused DescribeTable or a table deleted
 * meanwhile too (five minutes for an answer that will not change). Here only a table still
 * CREATING, or a retryable failure (throttled, unreachable), is looked at again.
 */
async function untilActive(client: DynamoDBClient, tableName: string, clock: Clock): Promise<void> {
  await retryUntil(
    async () => {
      const status = (await describeLeaseTable(client, tableName)).TableStatus;
      if (status === "ACTIVE") return;
      throw new ReplicatorError(
        "LEASE_STORE_UNAVAILABLE",
        `lease table ${tableName} is ${status}, not ACTIVE`,
        {
          details: { tableName, status },
        },
      );
    },
    { clock, retryable: isRetryable, deadline: clock.now() + ACTIVE_WAIT_MS, backoff: ACTIVE_POLL },
  );
}

/**
 * Reads the table's description and checks that it can hold leases. Throws LEASE_STORE_INVALID
 * listing every problem when the table is missing or keyed differently.
 */
export async function describeLeaseTable(
  client: DynamoDBClient,
  tableName: string,
): Promise<TableDescription> {
  let table: TableDescription | undefined;
  try {
    table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    throw translateDynamoDbError(error, "DescribeTable", tableName);
  }
  if (table === undefined) {
    throw new ReplicatorError(
      "LEASE_STORE_INVALID",
      `lease table ${tableName}: DescribeTable returned no table`,
      {
        details: { tableName },
      },
    );
  }
  const problems = leaseTableProblems(table);
  if (problems.length > 0) {
    throw new ReplicatorError(
      "LEASE_STORE_INVALID",
      `lease table ${tableName} has the wrong shape: ${problems.join("; ")}`,
      { details: { tableName, problems } },
    );
  }
  return table;
}

/** Every way `table` differs from the lease table's key schema; empty when it fits. */
export function leaseTableProblems(table: TableDescription): string[] {
  const problems: string[] = [];
  const keys = table.KeySchema ?? [];
  const hash = keys.find((k) => k.KeyType === "HASH");
  if (hash?.AttributeName !== LEASE_KEY_ATTRIBUTE) {
    problems.push(`partition key must be "${LEASE_KEY_ATTRIBUTE}", found "${hash?.AttributeName ?? "none"}"`);
  }
  const range = keys.find((k) => k.KeyType === "RANGE");
  if (range !== undefined) {
    problems.push(`must have no sort key, found "${range.AttributeName ?? "?"}"`);
  }
  const type = table.AttributeDefinitions?.find(
    (a) => a.AttributeName === LEASE_KEY_ATTRIBUTE,
  )?.AttributeType;
  if (hash?.AttributeName === LEASE_KEY_ATTRIBUTE && type !== "S") {
    problems.push(`"${LEASE_KEY_ATTRIBUTE}" must be a string (S), found ${type ?? "no definition"}`);
  }
  return problems;
}
