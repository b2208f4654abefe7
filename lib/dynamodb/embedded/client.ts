/**
 * A DynamoDB client for the embedded lease server. Two things make the server a faithful enough
 * stand-in for DynamoDbLeaseStore:
 *
 * 1. Restarts. Each request goes to the port the state directory names right now; when the server
 *    process is gone (idle exit, killed), the request starts a new one on the same data first. So a
 *    long `run` survives its server being restarted, and checkpoints survive both.
 * 2. ReturnValuesOnConditionCheckFailure. dynalite ignores it, and DynamoDbLeaseStore reads the
 *    returned item to tell why a conditional write failed. Without it the store is still safe (a
 *    failed condition is always treated as a lost lease) but loses one liveness case: a checkpoint
 *    whose first attempt landed and whose SDK retry then fails the "checkpoint must advance"
 *    condition would be LEASE_LOST instead of success. This client restores the item with a
 *    consistent GetItem after the failure. That read is not atomic with the write, but the store's
 *    only use of it is sound anyway: owner and counter never return to an earlier pair (the counter
 *    only grows), and only the holder moves the checkpoint, so "still ours, same checkpoint" seen
 *    afterwards was also true when the condition failed.
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  type UpdateItemCommandInput,
} from "@aws-sdk/client-dynamodb";
import { createDynamoDbClient } from "../client.js";
import { type EnsureLeaseServerOptions, ensureLeaseServer } from "./ensure.js";
import { isProcessAlive, readOrCreateSecret, SECRET_HEADER, type ServerRecord } from "./server-file.js";

export interface EmbeddedClientOptions extends EnsureLeaseServerOptions {
  readonly stateDir: string;
  /**
   * Time one request may take. Starting a server that is gone is not part of it (that happens
   * before the request is sent). @default 10 s
   */
  readonly requestTimeoutMs?: number;
}

/** Starts (or finds) the state directory's server, then returns a client bound to it. */
export async function createEmbeddedLeaseClient(options: EmbeddedClientOptions): Promise<DynamoDBClient> {
  let current: ServerRecord = await ensureLeaseServer(options.stateDir, options);
  // The server was started with it, so it exists; it never changes for a directory.
  const secret = await readOrCreateSecret(options.stateDir);
  let restarting: Promise<ServerRecord> | undefined;
  const live = async (): Promise<ServerRecord> => {
    if (isProcessAlive(current.pid)) return current;
    restarting ??= ensureLeaseServer(options.stateDir, options).finally(() => {
      restarting = undefined;
    });
    current = await restarting;
    return current;
  };

  const client = createDynamoDbClient({
    endpoint: `http://127.0.0.1:${current.port}`,
    region: "local",
    // The server accepts any credentials; fixed ones keep the SDK from searching the host.
    credentials: { accessKeyId: "kafka-mirror", secretAccessKey: "kafka-mirror" },
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
  });

  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { port?: number; headers?: Record<string, string> } | undefined;
      if (request !== undefined && typeof request === "object") {
        request.port = (await live()).port;
        if (request.headers !== undefined) request.headers[SECRET_HEADER] = secret;
      }
      return next(args);
    },
    { step: "finalizeRequest", name: "embeddedLeaseServerPortAndSecret", priority: "low" },
  );

  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const input = args.input as Partial<UpdateItemCommandInput>;
        if (
          context.commandName === "UpdateItemCommand" &&
          input.ReturnValuesOnConditionCheckFailure === "ALL_OLD" &&
          error instanceof ConditionalCheckFailedException &&
          error.Item === undefined &&
          input.TableName !== undefined &&
          input.Key !== undefined
        ) {
          const out = await client.send(
            new GetItemCommand({ TableName: input.TableName, Key: input.Key, ConsistentRead: true }),
          );
          error.Item = out.Item;
        }
        throw error;
      }
    },
    { step: "initialize", name: "emulateReturnValuesOnConditionCheckFailure" },
  );
  return client;
}
