/**
 * middy middleware that writes the invocation's metrics whether the handler returned or threw:
 * a failing run's error counts are the ones operators need most.
 */
import type { MiddlewareObj } from "@middy/core";

export interface Flushable {
  flush(): void;
}

export function flushMetrics(metrics: Flushable): MiddlewareObj {
  return {
    after: async () => metrics.flush(),
    onError: async () => metrics.flush(),
  };
}
