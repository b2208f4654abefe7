/**
 * What a worker tells the operator while it waits for leases a holder does not hand over: after a
 * kill -9 the restarted run sat ~50 s printing "0 records copied". The notice names how many
 * leases, whose, and the longest wait ("waiting for 9 leases held by w-3 to expire (up to 48 s)"),
 * once, and again only when that picture (the count or the holders) changes, not every round.
 */
import type { Logger } from "../ports.js";

/** A lease this worker was assigned and asked for, held by `owner` until `expiresAt`. */
export interface LeaseHeldElsewhere {
  readonly key: string;
  readonly owner: string;
  readonly expiresAt: number;
}

/** The notice for `waiting` at `now`, and what makes it change; null when nothing is waited for. */
export function describeLeaseWait(
  waiting: readonly LeaseHeldElsewhere[],
  now: number,
): { readonly text: string; readonly picture: string } | null {
  const pending = waiting.filter((w) => w.expiresAt > now);
  if (pending.length === 0) return null;
  const owners = [...new Set(pending.map((w) => w.owner))].sort();
  const upToS = Math.ceil((Math.max(...pending.map((w) => w.expiresAt)) - now) / 1_000);
  const leases = pending.length === 1 ? "1 lease" : `${pending.length} leases`;
  return {
    text: `waiting for ${leases} held by ${owners.join(", ")} to expire (up to ${upToS} s)`,
    picture: `${pending.length}|${owners.join(",")}`,
  };
}

export class LeaseWaitNotice {
  readonly #logger: Logger;
  #picture: string | null = null;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Logs the notice when the picture changed since the last one (a warning: nothing is copied meanwhile). */
  update(waiting: readonly LeaseHeldElsewhere[], now: number): void {
    const wait = describeLeaseWait(waiting, now);
    const picture = wait?.picture ?? null;
    if (picture === this.#picture) return;
    this.#picture = picture;
    if (wait !== null) {
      const holders = [...new Set(waiting.map((w) => w.owner))];
      this.#logger.warn(wait.text, { holders, leases: waiting.length });
    }
  }
}
