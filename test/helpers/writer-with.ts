/**
 * A TargetWriter that forwards to `writer`, with some calls replaced (to delay, fail, freeze or
 * watch them): the writer's twin of fake-leases.ts storeWith. A replacement calls `writer`
 * itself where it wants the real call.
 */
import type { TargetWriter } from "../../lib/core/ports.js";

export function writerWith(
  writer: TargetWriter,
  overrides: Partial<Omit<TargetWriter, "fences">>,
): TargetWriter {
  return {
    fences: writer.fences,
    producerId: (tp) => writer.producerId(tp),
    write: (tp, units, stamp, deadline, runDeadline) => writer.write(tp, units, stamp, deadline, runDeadline),
    fence: (tp, deadline) => writer.fence(tp, deadline),
    endOpenTransaction: (tp, deadline) => writer.endOpenTransaction(tp, deadline),
    useTransactionTimeout: (timeout) => writer.useTransactionTimeout(timeout),
    close: () => writer.close(),
    ...overrides,
  };
}
