/**
 * Waits for what Kafka makes visible only a moment after it answered a call, on the condition
 * Kafka documents, bounded; never a bare sleep. On real Kafka (the mock applies at once) an admin
 * change (CreateTopics, CreatePartitions, IncrementalAlterConfigs) is answered once the controller
 * made it; each broker applies it from the metadata log later, and the Metadata and
 * DescribeConfigs it serves show the old state until then (Kafka's AdminClient: "it may take
 * several seconds ... for all the brokers to become aware").
 */
const POLL_MS = 100;
const TIMEOUT_MS = 15_000;

/**
 * Reads until `shows` accepts the answer, and returns that answer. `shows` should test that the
 * change is visible (a count above the old one), not the claim under test, so a wrong value still
 * fails the test's own assertion with its message. On a cluster of several brokers each read may
 * be served by another broker: one that shows the change says nothing of the others.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  shows: (answer: T) => boolean,
  timeoutMs = TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await read();
    if (shows(answer)) return answer;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not shown within ${timeoutMs} ms; last answer: ${describe(answer)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function describe(answer: unknown): string {
  if (answer instanceof Map) return JSON.stringify([...answer].map(([k, v]) => [k, describe(v)]));
  return typeof answer === "object" ? JSON.stringify(answer) : String(answer);
}
