/**
 * The lease table port (lib/core/lease/table.ts) on a DynamoDB table: each call is one request,
 * conditions become ConditionExpressions (expressions.ts) and
 * items are translated both ways (lease-item.ts). A failed condition is an outcome the store
 * reads; every other SDK error becomes a ReplicatorError here (errors.ts), keeping it as cause.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import type { Condition } from "../core/lease/model.js";
import {
  type ItemChanges,
  KEY_ATTRIBUTE,
  type LeaseTable,
  type ScanCursor,
  type ScanEntry,
  type ScanPage,
  type Item as StoredItem,
  type WriteOptions,
  type WriteOutcome,
} from "../core/lease/table.js";
import { isReplicatorError } from "../errors.js";
import { translateDynamoDbError } from "./errors.js";
import { conditionExpression, type Expression, updateExpression } from "./expressions.js";
import { decodeItem, encodeItem, type Item, keyItem, keyOfItem } from "./lease-item.js";

export interface DynamoDbLeaseTableOptions {
  /** Built once by the caller (cold start), with the timeouts and retries it wants. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

export class DynamoDbLeaseTable implements LeaseTable {
  readonly #client: DynamoDBClient;
  readonly name: string;

  constructor(options: DynamoDbLeaseTableOptions) {
    this.#client = options.client;
    this.name = options.tableName;
  }

  async get(key: string, options: { readonly consistent: boolean }): Promise<StoredItem | undefined> {
    const command = new GetItemCommand({
      TableName: this.name,
      Key: keyItem(key),
      ConsistentRead: options.consistent,
    });
    const out = await this.#send(() => this.#client.send(command), "GetItem", { leaseKey: key });
    return out.Item === undefined ? undefined : decodeItem(key, out.Item);
  }

  /** One BatchGetItem (the store asks for at most EXISTING_MAX_KEYS, BatchGetItem's limit). */
  async existing(keys: readonly string[]): Promise<Set<string>> {
    // A key DynamoDB leaves unprocessed counts as missing (the port allows it).
    return new Set(await this.#batchGet(keys));
  }

  async put(key: string, item: StoredItem, options: WriteOptions): Promise<boolean> {
    const { condition } = options;
    const command = new PutItemCommand({
      TableName: this.name,
      Item: encodeItem(key, item),
      ...conditionParts(condition === undefined ? null : conditionExpression(condition)),
    });
    return this.#conditional(() => this.#client.send(command), `PutItem (${options.operation})`, key);
  }

  async update(key: string, changes: ItemChanges, options: WriteOptions): Promise<WriteOutcome> {
    const update = updateExpression(changes);
    const { condition } = options;
    const test = condition === undefined ? null : conditionExpression(condition);
    const returnItem = options.returnItem !== false;
    const command = new UpdateItemCommand({
      TableName: this.name,
      Key: keyItem(key),
      UpdateExpression: update.expression,
      ...conditionParts(test, update),
      ReturnValues: returnItem ? "ALL_NEW" : "NONE",
      ...(options.returnCurrent === true ? { ReturnValuesOnConditionCheckFailure: "ALL_OLD" } : {}),
    });
    let attributes: Item | undefined;
    try {
      attributes = (await this.#client.send(command)).Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        return { ok: false, current: error.Item === undefined ? undefined : decodeItem(key, error.Item) };
      }
      throw translateDynamoDbError(error, `UpdateItem (${options.operation})`, this.name, { leaseKey: key });
    }
    return {
      ok: true,
      item: returnItem && attributes !== undefined ? decodeItem(key, attributes) : undefined,
    };
  }

  delete(key: string, options: WriteOptions & { readonly condition: Condition }): Promise<boolean> {
    const command = new DeleteItemCommand({
      TableName: this.name,
      Key: keyItem(key),
      ...conditionParts(conditionExpression(options.condition)),
    });
    return this.#conditional(() => this.#client.send(command), `DeleteItem (${options.operation})`, key);
  }

  async scan(options: { readonly consistent: boolean; readonly after?: ScanCursor }): Promise<ScanPage> {
    const command = new ScanCommand({
      TableName: this.name,
      ConsistentRead: options.consistent,
      ExclusiveStartKey: options.after as Item | undefined,
    });
    const page = await this.#send(() => this.#client.send(command), "Scan", {});
    const entries = (page.Items ?? []).map(scanEntry);
    return page.LastEvaluatedKey === undefined ? { entries } : { entries, next: page.LastEvaluatedKey };
  }

  async #batchGet(keys: readonly string[]): Promise<string[]> {
    const command = new BatchGetItemCommand({
      RequestItems: {
        [this.name]: {
          Keys: keys.map(keyItem),
          ConsistentRead: true,
          ProjectionExpression: "#key",
          ExpressionAttributeNames: { "#key": KEY_ATTRIBUTE },
        },
      },
    });
    const out = await this.#send(() => this.#client.send(command), "BatchGetItem", { keys: keys.length });
    return (out.Responses?.[this.name] ?? []).flatMap((item) => item[KEY_ATTRIBUTE]?.S ?? []);
  }

  /** A conditional write whose refusal is `false`. */
  async #conditional(send: () => Promise<unknown>, operation: string, key: string): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw translateDynamoDbError(error, operation, this.name, { leaseKey: key });
    }
  }

  async #send<T>(send: () => Promise<T>, operation: string, details: Record<string, unknown>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw translateDynamoDbError(error, operation, this.name, details);
    }
  }
}

/** The ConditionExpression of a request and the names and values of all its expressions. */
function conditionParts(
  condition: Expression | null,
  update?: Expression,
): {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, AttributeValue>;
} {
  const names = { ...update?.names, ...condition?.names };
  const values = { ...update?.values, ...condition?.values };
  return {
    ...(condition === null ? {} : { ConditionExpression: condition.expression }),
    // DynamoDB refuses an empty map as much as an unused entry.
    ...(Object.keys(names).length === 0 ? {} : { ExpressionAttributeNames: names }),
    ...(Object.keys(values).length === 0 ? {} : { ExpressionAttributeValues: values }),
  };
}

/** A scanned item, or why it cannot be read (its key, the attribute at fault). */
function scanEntry(raw: Item): ScanEntry {
  let key = "(missing key)";
  try {
    key = keyOfItem(raw);
    return { key, item: decodeItem(key, raw) };
  } catch (error) {
    if (!isReplicatorError(error, "LEASE_STORE_INVALID")) throw error;
    return { key, unreadable: { attribute: String(error.details.attribute) } };
  }
}
