/**
 * The lease table in this process's memory: a LeaseTable backend like DynamoDB, applying the
 * same conditions (evaluated here, translated there) to the same items. The lease store over it
 * is the one the CLI runs with `--lease-store memory`, the unit tests and the scale simulation
 * use, and the conformance suite holds to what DynamoDB Local does.
 *
 * Every call is atomic (the check and the write happen in one turn of the event loop), and
 * every read is consistent, which satisfies the weaker promise of an eventually consistent read.
 * Items are copied in and out, so nobody holds a reference into the table. The leases live as
 * long as the table object: nothing is shared with another process or kept after this one ends.
 */
import type { Condition, ConditionAttribute } from "./model.js";
import type {
  Item,
  ItemChanges,
  LeaseTable,
  ScanCursor,
  ScanEntry,
  ScanPage,
  WriteOptions,
  WriteOutcome,
} from "./table.js";

export interface MemoryLeaseTableOptions {
  /** Items per scan page, so a scan goes over pages as it does on DynamoDB. @default 1000 */
  readonly pageSize?: number;
}

export class MemoryLeaseTable implements LeaseTable {
  readonly name = "memory";
  readonly #items = new Map<string, Item>();
  readonly #pageSize: number;

  constructor(options: MemoryLeaseTableOptions = {}) {
    this.#pageSize = Math.max(1, options.pageSize ?? 1_000);
  }

  async get(key: string): Promise<Item | undefined> {
    return this.peek(key);
  }

  async existing(keys: readonly string[]): Promise<Set<string>> {
    return new Set(keys.filter((key) => this.#items.has(key)));
  }

  async put(key: string, item: Item, options: WriteOptions): Promise<boolean> {
    if (!holds(options.condition, this.#items.get(key))) return false;
    this.#items.set(key, copy(item));
    return true;
  }

  async update(key: string, changes: ItemChanges, options: WriteOptions): Promise<WriteOutcome> {
    const current = this.#items.get(key);
    if (!holds(options.condition, current)) {
      return { ok: false, current: options.returnCurrent === true ? this.peek(key) : undefined };
    }
    const next: Item = { ...current, ...copy(changes.set) };
    for (const attribute of changes.remove) delete next[attribute];
    this.#items.set(key, next);
    return { ok: true, item: options.returnItem === false ? undefined : copy(next) };
  }

  async delete(key: string, options: WriteOptions & { readonly condition: Condition }): Promise<boolean> {
    if (!holds(options.condition, this.#items.get(key))) return false;
    return this.#items.delete(key);
  }

  /**
   * Items in key order (leases by topic, then partition), one page at a time. A page goes on
   * after the last key of the one before, so an item that stays in the table is read once
   * however the others change between pages.
   */
  async scan(options: { readonly after?: ScanCursor }): Promise<ScanPage> {
    const after = (options.after as { readonly key?: string } | undefined)?.key;
    const keys = [...this.#items.keys()]
      .filter((key) => after === undefined || compareKeys(key, after) > 0)
      .sort(compareKeys);
    const page = keys.slice(0, this.#pageSize);
    const entries: ScanEntry[] = page.map((key) => ({ key, item: this.peek(key) ?? {} }));
    const last = page.at(-1);
    return keys.length > page.length && last !== undefined ? { entries, next: { key: last } } : { entries };
  }

  /** A copy of `key`'s item, now: for tools and tests that look without a store in between. */
  peek(key: string): Item | undefined {
    const item = this.#items.get(key);
    return item === undefined ? undefined : copy(item);
  }

  /** Writes `item` under `key` at once, with no condition: for tools and tests that set a table up. */
  write(key: string, item: Item): void {
    this.#items.set(key, copy(item));
  }

  /** Every key, in scan order. */
  keys(): string[] {
    return [...this.#items.keys()].sort(compareKeys);
  }
}

/** A condition as DynamoDB decides it: a comparison with an absent attribute is false. */
export function holds(condition: Condition | undefined, item: Item | undefined): boolean {
  if (condition === undefined) return true;
  switch (condition.test) {
    case "allOf":
      return condition.pieces.every((piece) => holds(piece, item));
    case "anyOf":
      return condition.pieces.some((piece) => holds(piece, item));
    case "absent":
      return stored(item, condition.attribute) === undefined;
    case "equals":
      return stored(item, condition.attribute) === condition.value;
    case "lessThan":
    case "greaterThan": {
      const value = stored(item, condition.attribute);
      if (typeof value !== "number") return false;
      return condition.test === "lessThan" ? value < condition.value : value > condition.value;
    }
  }
}

/** The value a condition compares; the key is present exactly when the item is. */
function stored(item: Item | undefined, attribute: ConditionAttribute): unknown {
  if (item === undefined) return undefined;
  return attribute === "key" ? true : item[attribute];
}

/** Lease keys by topic, then partition as a number; the protocol's own items ('#...') first. */
function compareKeys(a: string, b: string): number {
  const [topicA, partitionA] = split(a);
  const [topicB, partitionB] = split(b);
  if (topicA !== topicB) return topicA < topicB ? -1 : 1;
  if (partitionA !== partitionB) return partitionA - partitionB;
  return a < b ? -1 : a > b ? 1 : 0;
}

function split(key: string): [string, number] {
  const at = key.lastIndexOf(":");
  const partition = Number(key.slice(at + 1));
  return at < 0 || !Number.isSafeInteger(partition) ? [key, -1] : [key.slice(0, at), partition];
}

/** Arrays, maps and the offset map's points are copied: the table shares no reference. */
function copy(item: Item): Item {
  const out: Item = { ...item };
  if (item.assignment !== undefined) out.assignment = [...item.assignment];
  if (item.producerIds !== undefined) out.producerIds = [...item.producerIds];
  if (item.backoff !== undefined) out.backoff = new Map(item.backoff);
  if (item.offsetMap !== undefined) out.offsetMap = item.offsetMap.map((point) => ({ ...point }));
  return out;
}
