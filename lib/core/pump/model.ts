/**
 * The shared types of the pump (pump/): how a pump's hold on its partition ends and what the
 * lease gate answers. Every step of the pump reads them, so they live below all of them.
 */

/** Why a pump's hold on its partition ended, short of an error. */
export type LeaseEnd =
  /** The worker asked it to stop (shutdown, or a handoff was requested). */
  | "stopped"
  /** The store said the lease is no longer ours (stolen, expired and taken, released). */
  | "lease-lost"
  /** The lease ran out by our own clock (e.g. the store was unreachable for renewals). */
  | "lease-expired"
  /** The lease reached the hard deadline and no write fits before it any more. */
  | "deadline";

/** "ok": go on; anything else: the pump stops for that reason. */
export type Gate = "ok" | LeaseEnd;
