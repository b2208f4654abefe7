/**
 * Reads the lease table: every lease (a consistent scan that skips, and reports, items it cannot
 * read) and which keys exist. Writes are the store's (lease-store.ts).
 */
import {
  BatchGetItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  ScanCommand,
  type ScanCommandOutput,
} from "@aws-sdk/client-dynamodb";
import type {
  LeaderLease,
  Lease,
  Logger,
  ReplicationMetrics,
  TableSnapshot,
  WorkerRecord,
} from "../core/ports.js";
import { isReplicatorError } from "../errors.js";
import { isWorkerKey, LEADER_KEY, leaderFromItem, workerFromItem } from "./coordination-item.js";
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

  /** Every lease in the table, read consistently (worker and leader items left out). */
  async list(): Promise<Lease[]> {
    return [...(await this.scan(true, false)).leases];
  }

  /**
   * Leases, worker items and the leader item, page by page. The leader's scan is not consistent
   * (half the read units): every write it leads to is conditional on what it saw.
   */
  async scan(consistent = false, withWorkers = true): Promise<TableSnapshot> {
    const leases: Lease[] = [];
    const workers: WorkerRecord[] = [];
    let leader: LeaderLease | null = null;
    let startKey: Item | undefined;
    do {
      const page = await this.#scan(startKey, consistent);
      for (const item of page.Items ?? []) {
        const read = readLeaseItem(item);
        if ("lease" in read) leases.push(read.lease);
        else if ("unreadable" in read) this.#skipped(read.unreadable);
        else if (read.coordination === LEADER_KEY) leader = leaderFromItem(item);
        else if (withWorkers && isWorkerKey(read.coordination)) {
          const worker = readWorker(item);
          if ("worker" in worker) workers.push(worker.worker);
          else this.#skipped(worker.unreadable);
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    return { leases, workers, leader };
  }

  /** One item by key: consistent for a lease about to be pumped, not for the leader item. */
  async getItem(key: Item, consistent: boolean): Promise<Item | undefined> {
    try {
      const out = await this.#client.send(
        new GetItemCommand({ TableName: this.#tableName, Key: key, ConsistentRead: consistent }),
      );
      return out.Item;
    } catch (error) {
      throw translateDynamoDbError(error, "GetItem", this.#tableName, { leaseKey: key[Attr.key]?.S });
    }
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

  async #scan(startKey: Item | undefined, consistent: boolean): Promise<ScanCommandOutput> {
    try {
      return await this.#client.send(
        new ScanCommand({
          TableName: this.#tableName,
          ConsistentRead: consistent,
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

/** A worker item the leader cannot read is skipped and reported, like an unreadable lease. */
function readWorker(item: Item): { readonly worker: WorkerRecord } | { readonly unreadable: UnreadableItem } {
  try {
    return { worker: workerFromItem(item) };
  } catch (error) {
    if (!isReplicatorError(error, "LEASE_STORE_INVALID")) throw error;
    const { leaseKey, attribute } = error.details;
    return { unreadable: { leaseKey: String(leaseKey), attribute: String(attribute) } };
  }
}
