/**
 * Reads the whole lease table, page by page: every lease (list) or every item of the protocol
 * (scan, the leader's read). One item nobody can read (another app's, a hand edit, a newer
 * layout) must not stop every worker's rebalance, so it is skipped and reported, never an error
 * and never overwritten. Operations on one held lease fail loudly instead (store.ts).
 */
import { isReplicatorError } from "../../errors.js";
import { leaderOf, leaseOf, workerOf } from "./items.js";
import type { LeaderLease, Lease, TableSnapshot, WorkerRecord } from "./model.js";
import {
  type Item,
  isCoordinationKey,
  isWorkerKey,
  LEADER_KEY,
  type LeaseTable,
  type ScanCursor,
} from "./table.js";

/** Distinct skipped items a reader warns about; the metric still counts every one. */
const MAX_SKIP_WARNINGS = 100;

/** Who hears of skipped items: a Logger and ReplicationMetrics (ports.ts) fit. */
export interface SkipObservers {
  /** Told about items the reads skip. @default silent */
  readonly logger?: { warn(message: string, fields?: Record<string, unknown>): void } | undefined;
  /** Counts the items the reads skip. @default none */
  readonly metrics?: { leaseItemSkipped?(event: { leaseKey: string; attribute: string }): void } | undefined;
}

interface Unreadable {
  readonly leaseKey: string;
  readonly attribute: string;
}

export class LeaseReader {
  readonly #table: LeaseTable;
  readonly #observers: SkipObservers;
  /** Skipped items already warned about (key and attribute). */
  readonly #warned = new Set<string>();

  constructor(table: LeaseTable, observers: SkipObservers) {
    this.#table = table;
    this.#observers = observers;
  }

  /** Every lease in the table, read consistently (worker and leader items left out). */
  async list(): Promise<Lease[]> {
    return [...(await this.#read(true, false)).leases];
  }

  /**
   * Leases, worker items and the leader item. Not consistent (half DynamoDB's read units): every
   * write it leads to is conditional on what it saw.
   */
  scan(): Promise<TableSnapshot> {
    return this.#read(false, true);
  }

  async #read(consistent: boolean, withWorkers: boolean): Promise<TableSnapshot> {
    const leases: Lease[] = [];
    const workers: WorkerRecord[] = [];
    let leader: LeaderLease | null = null;
    let after: ScanCursor | undefined;
    do {
      const page = await this.#table.scan({ consistent, ...(after === undefined ? {} : { after }) });
      for (const entry of page.entries) {
        const { key } = entry;
        // The protocol's own items are not leases: skipped quietly by lease readers.
        if (key === LEADER_KEY) {
          if ("item" in entry) leader = leaderOf(entry.item);
        } else if (isCoordinationKey(key)) {
          if (withWorkers && isWorkerKey(key)) this.#collect(key, entry, workerOf, workers);
        } else this.#collect(key, entry, leaseOf, leases);
      }
      after = page.next;
    } while (after !== undefined);
    return { leases, workers, leader };
  }

  #collect<T>(
    key: string,
    entry: { readonly item: Item } | { readonly unreadable: { readonly attribute: string } },
    read: (key: string, item: Item) => T,
    into: T[],
  ): void {
    if ("unreadable" in entry) {
      this.#skipped({ leaseKey: key, attribute: entry.unreadable.attribute });
      return;
    }
    try {
      into.push(read(key, entry.item));
    } catch (error) {
      if (!isReplicatorError(error, "LEASE_STORE_INVALID")) throw error;
      this.#skipped({ leaseKey: key, attribute: String(error.details.attribute) });
    }
  }

  /** Reported with its key and the attribute at fault, no values. */
  #skipped(item: Unreadable): void {
    this.#observers.metrics?.leaseItemSkipped?.({ leaseKey: item.leaseKey, attribute: item.attribute });
    // Every rebalance scans the table: warn once per item and process (bounded), count every time.
    const seen = `${item.leaseKey}\u0000${item.attribute}`;
    if (this.#warned.has(seen) || this.#warned.size >= MAX_SKIP_WARNINGS) return;
    this.#warned.add(seen);
    this.#observers.logger?.warn("lease table item skipped: not a lease this version can read", {
      tableName: this.#table.name,
      leaseKey: item.leaseKey,
      attribute: item.attribute,
      hint: "its partition is not copied until the item is fixed or removed",
    });
  }
}
