/**
 * The narrow table the lease store (store.ts) is written over, after Powertools'
 * BasePersistenceLayer: the protocol (which write, under which condition, what a refusal means)
 * is the store's, and a backend only keeps items under keys and applies a condition it is given.
 * Two backends implement it: DynamoDB (lib/dynamodb/lease-table-port.ts) and this process's
 * memory (memory-table.ts). Both pass the same conformance suite.
 *
 * One call of this port is one request to the backend: the store's request count per operation
 * is the count of its calls here, which is what DynamoDB bills.
 */
import { ReplicatorError } from "../../errors.js";
import type { Condition, OffsetMapPoint } from "./model.js";

/** The key's name: DynamoDB's partition key attribute, and the one error details name. */
export const KEY_ATTRIBUTE = "leaseKey";

/**
 * Keys of the protocol's own items start with '#', which no lease key can: topic names are
 * [a-zA-Z0-9._-]. `#leader` is the leader item, `#worker/<id>` a worker's. A lease's key is
 * model.partitionKey of its partition.
 */
export const LEADER_KEY = "#leader";
const WORKER_PREFIX = "#worker/";

export function workerKey(workerId: string): string {
  return `${WORKER_PREFIX}${workerId}`;
}

export function isCoordinationKey(key: string): boolean {
  return key.startsWith("#");
}

export function isWorkerKey(key: string): boolean {
  return key.startsWith(WORKER_PREFIX);
}

/**
 * Every attribute an item of the lease table may have, and its value. Lease items use the first
 * group (layout: items.ts), worker and leader items the second with `owner`, `counter`,
 * `expiresAt` and `updatedAt`. DynamoDB stores each under the same name (lib/dynamodb/item-codec.ts).
 */
export interface Attributes {
  readonly topic: string;
  readonly partition: number;
  readonly owner: string;
  readonly counter: number;
  readonly expiresAt: number;
  readonly checkpoint: number;
  readonly lastProgressAt: number;
  /** Epoch ms of the last write of any kind: for operators, never decides anything. */
  readonly updatedAt: number;
  readonly handoffTo: string;
  readonly targetOffset: number;
  readonly sourceTopicId: string;
  readonly sourceEpoch: number;
  /** The checkpoint `sourceEpoch` was stored with (items.ts, storedEpoch). */
  readonly sourceEpochAt: number;
  readonly offsetMap: readonly OffsetMapPoint[];
  /** Producer ids in decimal (Kafka's are int64): Lease.producerIds. */
  readonly producerIds: readonly string[];
  readonly workerId: string;
  readonly slot: string;
  readonly startedAt: number;
  readonly draining: boolean;
  readonly deadline: number;
  readonly assignment: readonly string[];
  readonly backoff: ReadonlyMap<string, number>;
}

export type AttributeName = keyof Attributes;

/**
 * An item as a backend returns it: the attributes it has, each of the right type (a backend
 * that stores values of another type reports the item unreadable instead). Which attributes an
 * item must have is the store's to check (items.ts).
 */
export type Item = { -readonly [A in AttributeName]?: Attributes[A] };

/** What an update writes: attributes set and attributes removed. */
export interface ItemChanges {
  readonly set: Item;
  readonly remove: readonly AttributeName[];
}

/** Builds ItemChanges; an attribute is either set or removed, the later call wins. */
export class ChangeSet implements ItemChanges {
  readonly set: Item = {};
  readonly #remove = new Set<AttributeName>();

  with<A extends AttributeName>(attribute: A, value: Attributes[A]): this {
    this.set[attribute] = value as Item[A];
    this.#remove.delete(attribute);
    return this;
  }

  without(...attributes: readonly AttributeName[]): this {
    for (const attribute of attributes) {
      delete this.set[attribute];
      this.#remove.add(attribute);
    }
    return this;
  }

  get remove(): readonly AttributeName[] {
    return [...this.#remove];
  }
}

export interface WriteOptions {
  /** The store operation the write belongs to, for errors ("renew", "heartbeat"). */
  readonly operation: string;
  /** Write only if this holds. @default unconditional */
  readonly condition?: Condition;
  /** Return the item as written. @default true */
  readonly returnItem?: boolean;
  /**
   * On a failed condition, return the item that failed it, when the backend can (DynamoDB's
   * ReturnValuesOnConditionCheckFailure). @default false
   */
  readonly returnCurrent?: boolean;
}

/** A failed condition is an outcome, not an error. */
export type WriteOutcome =
  /** `item`: the item as written; undefined when not asked for. */
  | { readonly ok: true; readonly item: Item | undefined }
  /** `current`: the item the condition failed on, when asked for and returned (undefined: none). */
  | { readonly ok: false; readonly current: Item | undefined };

/** One item of a scan: readable, or not (its key and the attribute at fault). */
export type ScanEntry =
  | { readonly key: string; readonly item: Item }
  | { readonly key: string; readonly unreadable: { readonly attribute: string } };

/** Where a scan goes on; only the table that returned it reads it. */
export type ScanCursor = object;

export interface ScanPage {
  readonly entries: readonly ScanEntry[];
  /** Absent on the last page. */
  readonly next?: ScanCursor;
}

/** Keys one `existing` call may ask about: DynamoDB's BatchGetItem reads 100 per request. */
export const EXISTING_MAX_KEYS = 100;

export interface LeaseTable {
  /** Where the items live, for messages (a DynamoDB table name, "memory"). */
  readonly name: string;
  /**
   * The item under `key`; undefined when there is none. `consistent`: reflects every write
   * acknowledged before the call. An item it cannot read is LEASE_STORE_INVALID.
   */
  get(key: string, options: { readonly consistent: boolean }): Promise<Item | undefined>;
  /**
   * Which of `keys` (at most EXISTING_MAX_KEYS) have an item, read consistently. A key the
   * backend could not check counts as missing: every write after it is conditional, so that
   * costs a refused write at most.
   */
  existing(keys: readonly string[]): Promise<Set<string>>;
  /** Writes `item` whole under `key` if the options' condition holds. False: it did not. */
  put(key: string, item: Item, options: WriteOptions): Promise<boolean>;
  /**
   * Applies `changes` to `key`'s item if the options' condition holds, creating the item when
   * there is none (so a condition that holds on a missing item may create one).
   */
  update(key: string, changes: ItemChanges, options: WriteOptions): Promise<WriteOutcome>;
  /** Deletes `key`'s item if the condition holds (never unconditional). False: it did not. */
  delete(key: string, options: WriteOptions & { readonly condition: Condition }): Promise<boolean>;
  /** One page of every item; `after` is the previous page's `next`. */
  scan(options: { readonly consistent: boolean; readonly after?: ScanCursor }): Promise<ScanPage>;
}

/**
 * The LEASE_STORE_INVALID for an item whose `attribute` is not what the layout says: both the
 * backends' readers (a value of the wrong type) and the store's (a missing attribute, a key that
 * does not match) name the item's key and the attribute, never a value.
 */
export function unreadableItem(key: string, attribute: string, problem: string): ReplicatorError {
  const what = isCoordinationKey(key) ? "item" : "lease item";
  return new ReplicatorError("LEASE_STORE_INVALID", `${what} ${key}: attribute "${attribute}" ${problem}`, {
    details: { leaseKey: key, attribute },
  });
}

/** The item a write returned; LEASE_STORE_INVALID when the backend returned none. */
export function writtenItem(item: Item | undefined, key: string, operation: string): Item {
  if (item !== undefined) return item;
  throw new ReplicatorError("LEASE_STORE_INVALID", `${operation} on ${key} returned no item`, {
    details: { leaseKey: key, operation },
  });
}
