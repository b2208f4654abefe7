/**
 * A worker's clock checked against DynamoDB's. Lease and heartbeat expiries are written by one
 * worker's clock and read by another's, so the protocol holds only while clocks differ by a few
 * seconds (README, *Leases*); beyond that partitions move back and forth. No worker can see
 * another's clock, but every DynamoDB answer carries DynamoDB's own (the HTTP Date header, in
 * whole seconds), so each worker can tell when its clock is off, either way, by itself.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Clock, Logger } from "../core/ports.js";

/** Skew worth a warning: the lease timings tolerate a few seconds (README, *Leases*). */
export const CLOCK_SKEW_WARN_MS = 2_000;
/** A skew that lasts is logged again this often, not on every call. */
export const CLOCK_SKEW_REPEAT_MS = 10 * 60_000;

/**
 * How far `clock` is off the server's at least, in ms (positive: ahead), from one exchange: the
 * request sent at `sentAt` and answered at `receivedAt` by our clock, with the answer's Date
 * header `serverDate` (whole seconds, so the server's time then was in [date, date + 1 s)).
 * 0 when the two clocks may agree.
 */
export function clockSkewAtLeast(sentAt: number, receivedAt: number, serverDate: number): number {
  const ahead = sentAt - (serverDate + 1_000);
  if (ahead > 0) return ahead;
  const behind = serverDate - receivedAt;
  return behind > 0 ? -behind : 0;
}

/** When each client last warned: a client's lease stores come and go (a warm function's runs). */
const lastWarning = new WeakMap<DynamoDBClient, number>();

/**
 * Checks every answer `client` gets against the worker's `clock` and warns, at most every
 * CLOCK_SKEW_REPEAT_MS per client, when they are CLOCK_SKEW_WARN_MS or more apart. Named, so a
 * client shared by several lease stores keeps one check, with the latest's clock and logger.
 */
export function watchClockSkew(client: DynamoDBClient, clock: Clock, logger: Logger): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const sentAt = clock.now();
      const result = await next(args);
      const receivedAt = clock.now();
      const date = dateHeader(result.response);
      const skewMs = date === null ? 0 : clockSkewAtLeast(sentAt, receivedAt, date);
      const warnedAt = lastWarning.get(client) ?? Number.NEGATIVE_INFINITY;
      if (Math.abs(skewMs) >= CLOCK_SKEW_WARN_MS && receivedAt - warnedAt >= CLOCK_SKEW_REPEAT_MS) {
        lastWarning.set(client, receivedAt);
        logger.warn(`this worker's clock is ${skewMs > 0 ? "ahead of" : "behind"} DynamoDB's`, {
          skewMsAtLeast: Math.abs(skewMs),
          why: "lease expiries are written by one worker's clock and read by another's: beyond a few seconds, partitions move back and forth between workers (nothing is lost or copied twice); sync this host's clock (NTP, chrony)",
        });
      }
      return result;
    },
    // The innermost step: one attempt's send and answer, not the retries around it.
    { step: "deserialize", name: "kafkaMirrorClockSkew", override: true },
  );
}

function dateHeader(response: unknown): number | null {
  const headers = (response as { headers?: Record<string, string | undefined> } | undefined)?.headers;
  const value = headers?.date ?? headers?.Date;
  if (value === undefined) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : null;
}
