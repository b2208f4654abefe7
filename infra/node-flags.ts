/**
 * How the replicator functions' Node process starts. Lambda's NODE_OPTIONS refuses V8 flags other
 * than a few (the heap's maximum sizes among them, not its initial size), so the functions start
 * through an exec wrapper (AWS_LAMBDA_EXEC_WRAPPER, infra/node-flags-wrapper.sh) that puts
 * NODE_FLAGS_VARIABLE's flags after node's path. The bench starts its worker with the same flags
 * and malloc settings, so that it measures what Lambda runs.
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

/**
 * glibc's malloc settings for the functions' process (GLIBC_TUNABLES, read when a process starts;
 * the wrapper's exec keeps it). Every fetch answer is a buffer of about a megabyte from malloc;
 * with glibc's defaults many of them were new pages from the kernel, zeroed on first touch
 * (clear_page in `perf`), and went back to it when freed. Below a 32 MiB mmap threshold and a
 * 128 MiB trim threshold, freed answers stay in the heap for the next ones. Measured with
 * `scripts/copy-floor.ts` (the socket path alone, two runs each): 1.22-1.23 CPU-s/GiB with glibc's
 * defaults, 0.78-1.01 with these. In `bench --copy batches` the worker's page faults over a 1 GiB
 * copy fell from 65-78k to 44-53k (the others are V8's own pages) and its peak RSS stayed within
 * 206-239 MB; its CPU per GiB moved less than it does between two runs of the same build.
 */
export const FUNCTION_MALLOC_TUNABLES =
  "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728";

/** The functions' variable holding FUNCTION_NODE_FLAGS, space-separated, for the wrapper. */
export const NODE_FLAGS_VARIABLE = "KAFKA_MIRROR_NODE_FLAGS";

/** The wrapper, beside the bundle in /var/task. */
export const EXEC_WRAPPER_FILE = "node-flags-wrapper.sh";
