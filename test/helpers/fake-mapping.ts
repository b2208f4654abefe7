/**
 * A TopicMapping from two functions, for unit tests.
 */
import type { TopicMapping } from "../../lib/core/ports.js";

/** A TopicMapping from two functions; selects everything not starting with "__" by default. */
export function fakeMapping(
  options: { select?: (topic: string) => boolean; rename?: (topic: string) => string } = {},
): TopicMapping {
  return {
    isSelected: options.select ?? ((t) => !t.startsWith("__")),
    targetTopic: options.rename ?? ((t) => t),
    whyNothingSelected: (topics) => `the fake mapping selects none of ${topics.length} topic(s)`,
  };
}
