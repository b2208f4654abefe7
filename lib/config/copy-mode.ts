/**
 * The settings target.copy "batches" cannot keep exact (lib/core/pump/target-tail.ts says why it
 * needs fenced writes), refused when the config is read rather than found by a running worker.
 */
import type { z } from "zod";

/** target.copy "batches" refuses what it cannot keep exact: each setting named, with the fix. */
export function checkBatchesMode(
  config: {
    readonly target: {
      readonly copy: string;
      readonly fencing: string;
      readonly alias?: string | undefined;
    };
  },
  ctx: z.RefinementCtx,
): void {
  const { target } = config;
  if (target.copy !== "batches") return;
  const refuse = (field: string, input: unknown, why: string) =>
    ctx.addIssue({
      code: "custom",
      path: ["target", field],
      input,
      message: `${why} with target.copy "batches"`,
    });
  if (target.fencing !== "transactional")
    refuse(
      "fencing",
      target.fencing,
      `must be "transactional", got ${JSON.stringify(target.fencing)}: fenced writes are how it knows what landed`,
    );
  if (target.alias !== undefined)
    refuse(
      "alias",
      target.alias,
      `must be unset (active-active mirrors loop without a provenance header), got ${JSON.stringify(target.alias)}; use target.copy "records"`,
    );
}
