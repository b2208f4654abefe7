/**
 * The lease store conformance suite (test/helpers/lease-conformance) on the in-memory table, with
 * small scan pages so every whole-table read goes over several.
 */
import { MemoryLeaseTable } from "../../../../lib/core/lease/memory-table.js";
import { counted } from "../../../helpers/lease-conformance/backend.js";
import { leaseStoreConformance } from "../../../helpers/lease-conformance/index.js";

const served: ReturnType<typeof counted>["calls"][] = [];

leaseStoreConformance("memory", {
  async table() {
    const { table, calls } = counted(new MemoryLeaseTable({ pageSize: 7 }));
    served.push(calls);
    return table;
  },
  requests: () => served.reduce((sum, calls) => sum + Object.values(calls).reduce((a, b) => a + b, 0), 0),
});
