/**
 * Samples the lease table (every 250 ms by default) and tells, per partition, how long it had no
 * live holder (no owner, or an expired lease) and the longest such stretch, and how often its
 * holder changed (handoffs and takeovers).
 */
import type { Lease } from "../../lib/core/ports.js";

export interface HolderStats {
  /** Fraction of sampled time the partition had no live holder. */
  readonly holderlessFraction: number;
  readonly maxHolderlessMs: number;
  /** Holder changes from one live owner to another, or after a holderless stretch. */
  readonly holderChanges: number;
}

interface Track {
  holderlessMs: number;
  sampledMs: number;
  stretchStart: number | null;
  maxStretchMs: number;
  owner: string | null;
  changes: number;
}

export class LeaseSampler {
  readonly #list: () => Promise<Lease[]>;
  readonly #tracks = new Map<string, Track>();
  #last: number | null = null;
  #timer: NodeJS.Timeout | null = null;
  #busy = false;
  #stopped = false;

  constructor(list: () => Promise<Lease[]>) {
    this.#list = list;
  }

  start(everyMs = 250): void {
    this.#timer = setInterval(() => void this.#sample(), everyMs);
  }

  /** Ends the sampling (again: no effect). */
  stop(): void {
    if (this.#stopped) return;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#stopped = true;
    const now = Date.now();
    for (const t of this.#tracks.values())
      if (t.stretchStart !== null) t.maxStretchMs = Math.max(t.maxStretchMs, now - t.stretchStart);
  }

  /** Per partition key ("topic:partition"). */
  stats(): Map<string, HolderStats> {
    const out = new Map<string, HolderStats>();
    for (const [key, t] of this.#tracks)
      out.set(key, {
        holderlessFraction: t.sampledMs === 0 ? 0 : t.holderlessMs / t.sampledMs,
        maxHolderlessMs: t.maxStretchMs,
        holderChanges: t.changes,
      });
    return out;
  }

  async #sample(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const leases = await this.#list();
      // A sample answered after stop() sees the runs' final releases, not a gap while they ran.
      if (this.#stopped) return;
      const now = Date.now();
      const step = this.#last === null ? 0 : now - this.#last;
      this.#last = now;
      for (const lease of leases) this.#observe(`${lease.topic}:${lease.partition}`, lease, now, step);
    } catch {
      // A failed sample is a gap in the samples, not a holderless partition.
    } finally {
      this.#busy = false;
    }
  }

  #observe(key: string, lease: Lease, now: number, step: number): void {
    let t = this.#tracks.get(key);
    if (t === undefined) {
      t = { holderlessMs: 0, sampledMs: 0, stretchStart: null, maxStretchMs: 0, owner: null, changes: 0 };
      this.#tracks.set(key, t);
    }
    const live = lease.owner !== null && lease.expiresAt > now ? lease.owner : null;
    t.sampledMs += step;
    if (live === null) {
      t.holderlessMs += step;
      t.stretchStart ??= now - step;
    } else {
      if (t.stretchStart !== null) t.maxStretchMs = Math.max(t.maxStretchMs, now - t.stretchStart);
      t.stretchStart = null;
      if (t.owner !== null && t.owner !== live) t.changes++;
      t.owner = live;
    }
  }
}
