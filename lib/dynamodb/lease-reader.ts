/**
 * Reads the lease table: every lease (a consistent scan that skips, and reports, items it cannot
 * read) and which keys exist. Writes are the store's (lease-store.ts).
 */
import {
  BatchGetItemCommand,
  type DynamoDBClient,
  ScanCommand,
  type ScanCommandOutput,
} from "@aws-sdk/client-dynamodb";
import type { Lease, Logger, ReplicationMetrics } from "../core/ports.js";
import { translateDynamoDbError } from "./errors.js";
import { Attr, type Item, readLeaseItem, type UnreadableItem } from "./lease-item.js";

/** Distinct skipped items a reader warns about; the metric still counts every one. */
const MAX_SKIP_WARNINGS = 100;

/** BatchGetItem's limit per request. */
const BATCH_GET_MAX_KEYS = 100;

export interface LeaseReaderOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  readonly logger?: Logger | undefined;
  readonly metrics?: Pick<ReplicationMetrics, "leaseItemSkipped"> | undefined;
}

export class LeaseReader {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #logger: Logger | undefined;
  readonly #metrics: Pick<ReplicationMetrics, "leaseItemSkipped"> | undefined;
  /** Skipped items already warned about (key and attribute). */
  readonly #warned = new Set<string>();

  constructor(options: LeaseReaderOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
    this.#logger = options.logger;
    this.#metrics = options.metrics;
  }

  /** Every lease in the table, read consistently. */
  async list(): Promise<Lease[]> {
    const leases: Lease[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.#scan(startKey);
      for (const item of page.Items ?? []) {
        const read = readLeaseItem(item);
        if ("lease" in read) leases.push(read.lease);
        else this.#skipped(read.unreadable);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return leases;
  }

  /** Which of `keys` have an item (a key DynamoDB leaves unprocessed counts as missing). */
  async existingKeys(keys: readonly string[]): Promise<Set<string>> {
    const existing = new Set<string>();
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX_KEYS) {
      const chunk = keys.slice(i, i + BATCH_GET_MAX_KEYS);
      // Counting an unprocessed key as missing is safe: the put that follows is conditional, so
      // treating an existing lease as missing costs one refused write, nothing more.
      for (const item of await this.#batchGet(chunk)) {
        const key = item[Attr.key]?.S;
        if (key !== undefined) existing.add(key);
      }
    }
    return existing;
  }

  async #scan(startKey: Item | undefined): Promise<ScanCommandOutput> {
    try {
      return await this.#client.send(
        new ScanCommand({
          TableName: this.#tableName,
          // A claim decided on an eventually consistent read would be refused anyway (the
          // counter moved), but every such miss costs a write and a lease-balancing round.
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
    } catch (error) {
      throw translateDynamoDbError(error, "Scan", this.#tableName);
    }
  }

  async #batchGet(keys: readonly string[]): Promise<Item[]> {
    try {
      const out = await this.#client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [this.#tableName]: {
              Keys: keys.map((key) => ({ [Attr.key]: { S: key } })),
              ConsistentRead: true,
              ProjectionExpression: "#key",
              ExpressionAttributeNames: { "#key": Attr.key },
            },
          },
        }),
      );
      return out.Responses?.[this.#tableName] ?? [];
    } catch (error) {
      throw translateDynamoDbError(error, "BatchGetItem", this.#tableName, { keys: keys.length });
    }
  }

  /**
   * An item list() cannot read is left alone (never overwritten: it may be another app's, or a
   * lease a newer version wrote) and reported: its key and the attribute at fault, no values.
   */
  #skipped(item: UnreadableItem): void {
    this.#metrics?.leaseItemSkipped?.({ leaseKey: item.leaseKey, attribute: item.attribute });
    // Every rebalance scans the table: warn once per item and process (bounded), count every time.
    const seen = `${item.leaseKey}\u0000${item.attribute}`;
    if (this.#warned.has(seen) || this.#warned.size >= MAX_SKIP_WARNINGS) return;
    this.#warned.add(seen);
    this.#logger?.warn("lease table item skipped: not a lease this version can read", {
      tableName: this.#tableName,
      leaseKey: item.leaseKey,
      attribute: item.attribute,
      hint: "its partition is not copied until the item is fixed or removed",
    });
  }
}
