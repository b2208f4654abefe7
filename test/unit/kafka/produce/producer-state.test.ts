import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProducerState } from "../../../../lib/kafka/produce/producer-state.js";

describe("ProducerState", () => {
  it("starts every partition at sequence 0 and advances only on acknowledgement", () => {
    const state = new ProducerState();
    const id = state.adopt(5n, 0);

    assert.equal(state.nextSequence("0:t", id), 0);
    state.acknowledged("0:t", id, 0, 10);
    assert.equal(state.nextSequence("0:t", id), 10);
    assert.equal(state.nextSequence("1:t", id), 0);
  });

  it("wraps sequences at 2^31 like Kafka's producer", () => {
    const state = new ProducerState();
    const id = state.adopt(5n, 0);

    state.acknowledged("0:t", id, 2 ** 31 - 2, 5);

    assert.equal(state.nextSequence("0:t", id), 3);
  });

  it("after a reset drops the identity and restarts partitions at 0 under the next one", () => {
    const state = new ProducerState();
    const first = state.adopt(5n, 0);
    state.acknowledged("0:t", first, 0, 10);
    state.acknowledged("1:t", first, 0, 4);

    state.reset("0:t", first);
    const second = state.adopt(6n, 0);

    assert.equal(state.current(), second);
    assert.equal(state.nextSequence("0:t", second), 0);
    assert.equal(state.nextSequence("1:t", second), 0);
  });

  it("a late reset for an old identity does not drop the new one", () => {
    const state = new ProducerState();
    const first = state.adopt(5n, 0);
    state.reset("0:t", first);
    const second = state.adopt(6n, 0);

    state.reset("1:t", first);

    assert.equal(state.current(), second);
  });
});
