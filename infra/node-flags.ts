/**
 * How the replicator functions' Node process starts. Lambda's NODE_OPTIONS refuses V8 flags other
 * than a few (the heap's maximum sizes among them, not its initial size), so the functions start
 * through an exec wrapper (AWS_LAMBDA_EXEC_WRAPPER, infra/node-flags-wrapper.sh) that puts
 * NODE_FLAGS_VARIABLE's flags after node's path. The bench starts its worker with the same flags,
 * so that it measures what Lambda runs.
 */

/**
 * `--initial-old-space-size`: every fetch answer is a new buffer outside V8's heap, and V8 counts
 * those bytes against an old generation sized from what the worker keeps alive (about 20 MB), so
 * it ran a full mark-compact every few megabytes copied: about a third of the worker's CPU in
 * `bench --copy batches` (concurrent marking and sweeping on the helper threads, the compaction on
 * the main one). Starting the old generation at 128 MB made them rarer (--trace-gc: one every
 * 350-450 ms instead of every 50-100 ms) and the worker's peak RSS moved within 30 MB. No effect
 * when set at run time (v8.setFlagsFromString): V8 sizes the heap when it starts.
 */
export const FUNCTION_NODE_FLAGS: readonly string[] = ["--initial-old-space-size=128"];

/** The functions' variable holding FUNCTION_NODE_FLAGS, space-separated, for the wrapper. */
export const NODE_FLAGS_VARIABLE = "KAFKA_MIRROR_NODE_FLAGS";

/** The wrapper, beside the bundle in /var/task. */
export const EXEC_WRAPPER_FILE = "node-flags-wrapper.sh";
