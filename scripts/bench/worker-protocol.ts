/**
 * The lines the bench and its worker process exchange besides the report (mirror-worker.ts), in
 * a module of their own: the bench must not load the worker's module, which runs the worker.
 */

/** The worker's line on stdout once a shared warm-up copy is done, then the records it copied. */
export const WARM_LINE = "warmed up:";

/** The bench's line on the worker's stdin: copy the measured topic now. */
export const GO_LINE = "go";
