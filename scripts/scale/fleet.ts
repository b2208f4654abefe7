/**
 * One simulated fleet on virtual time: the lease store over the in-memory table (the store the
 * functions run over DynamoDB, the same conditions) behind the counting wrapper, SimWorkers stepped every STEP_MS, and the checks the
 * scale run reports: balance (max minus min held leases per live non-draining worker <= 1, every
 * partition held) and that no partition is ever held by two live workers.
 */
import { MemoryLeaseTable } from "../../lib/core/lease/memory-table.js";
import { TableLeaseStore } from "../../lib/core/lease/store.js";
import { partitionKey } from "../../lib/core/model.js";
import { seededRandom } from "../../test/helpers/fake-clock.js";
import { CountingStore, type Units } from "./counting-store.js";
import { type SimSettings, SimWorker } from "./sim-worker.js";

export const STEP_MS = 50;

export class Fleet {
  now = 0;
  readonly counting: CountingStore;
  readonly workers: SimWorker[] = [];
  readonly #random: () => number;
  readonly #keys: string[];
  #joined = 0;

  constructor(
    readonly partitions: number,
    readonly settings: SimSettings,
    seed = 1,
  ) {
    // Time in the store is informational only (updatedAt): no condition compares it.
    this.counting = new CountingStore(new TableLeaseStore({ table: new MemoryLeaseTable() }));
    this.#random = seededRandom(seed);
    this.#keys = Array.from({ length: partitions }, (_, p) =>
      partitionKey({ topic: `t${p % 50}`, partition: p }),
    );
  }

  async setup(): Promise<void> {
    const tps = Array.from({ length: this.partitions }, (_, p) => ({ topic: `t${p % 50}`, partition: p }));
    await this.counting.inner.ensure(tps);
  }

  /** `n` workers join, each starting within one rebalance interval from now. */
  join(n: number, slots: readonly string[] = []): SimWorker[] {
    const out: SimWorker[] = [];
    for (let i = 0; i < n; i++) {
      const start = this.now + Math.floor(this.#random() * this.settings.rebalanceIntervalMs);
      const id = `w${this.#joined++}`;
      const w = new SimWorker(id, this.counting.store(), this.settings, start, slots[i] ?? id);
      this.workers.push(w);
      out.push(w);
    }
    return out;
  }

  live(): SimWorker[] {
    return this.workers.filter((w) => w.alive && !w.gone && w.startAt <= this.now);
  }

  async step(): Promise<void> {
    this.now += STEP_MS;
    for (const w of this.workers) await w.tick(this.now);
    this.#checkSingleHolder();
  }

  /** Runs until balanced (true) or `limitMs` passed (false). */
  async untilBalanced(limitMs: number): Promise<number | null> {
    const from = this.now;
    while (this.now - from < limitMs) {
      await this.step();
      if (this.balanced()) return this.now - from;
    }
    return null;
  }

  async run(ms: number): Promise<Units> {
    const before = this.counting.snapshot();
    const end = this.now + ms;
    while (this.now < end) await this.step();
    return perSecond(before, this.counting.snapshot(), ms);
  }

  balanced(): boolean {
    // Workers that joined but have not started yet count too (with nothing): not balanced.
    const receivers = this.workers.filter((w) => w.alive && !w.gone && !w.draining);
    if (receivers.length === 0) return false;
    const held = new Set<string>();
    let min = Number.POSITIVE_INFINITY;
    let max = 0;
    for (const w of receivers) {
      let n = 0;
      for (const [key, l] of w.held) {
        if (l.expiresAt <= this.now) continue;
        n++;
        held.add(key);
      }
      min = Math.min(min, n);
      max = Math.max(max, n);
    }
    return max - min <= 1 && this.#keys.every((k) => held.has(k));
  }

  /** The promise: two live workers never both believe they hold one lease unexpired. */
  #checkSingleHolder(): void {
    const seen = new Map<string, string>();
    for (const w of this.live())
      for (const [key, l] of w.held) {
        if (l.expiresAt <= this.now) continue;
        const other = seen.get(key);
        if (other !== undefined) throw new Error(`${key} held by ${other} and ${w.id} at ${this.now}`);
        seen.set(key, w.id);
      }
  }
}

export function perSecond(before: Units, after: Units, ms: number): Units {
  const s = ms / 1000;
  return {
    reads: (after.reads - before.reads) / s,
    writes: (after.writes - before.writes) / s,
    calls: (after.calls - before.calls) / s,
  };
}
