/** The composition module's choices that a unit test can see without a broker: what it builds. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseConfig } from "../../lib/config/schema.js";
import { closeGroupSyncStep, groupSyncStep } from "../../lib/wiring.js";
import { CapturingLogger } from "../helpers/fake-observability.js";

const config = (target: Record<string, unknown>, provenance: boolean) =>
  parseConfig({
    source: { brokers: ["127.0.0.1:1"], alias: "A" },
    target: { brokers: ["127.0.0.1:2"], ...target },
    topics: { whitelist: "orders" },
    groups: { whitelist: "billing" },
    provenance: { enabled: provenance },
  });

describe("groupSyncStep", () => {
  it('translates target.copy "batches" by the source\'s batches, provenance or not', async () => {
    for (const provenance of [false, true]) {
      const step = groupSyncStep(config({ copy: "batches" }, provenance), {
        logger: new CapturingLogger(),
        security: {},
      });

      assert.equal(step?.copy, "batches");
      assert.ok(step?.copy === "batches" && step.sourceReader !== undefined, "no reader of the source");
      await closeGroupSyncStep(step);
    }
  });

  it('translates target.copy "records" by provenance, and syncs nothing without it', async () => {
    const logger = new CapturingLogger();
    const step = groupSyncStep(config({}, true), { logger, security: {} });
    assert.ok(step !== null && step.copy !== "batches", "not a records step");
    assert.equal(step.header.toString(), "kafka-mirror.provenance");
    await closeGroupSyncStep(step);

    assert.equal(groupSyncStep(config({}, false), { logger, security: {} }), null);
    assert.match(logger.entries.at(-1)?.message ?? "", /provenance\.enabled is false/);
  });
});
