/**
 * The shared types of the writer (produce/): one produce attempt's result, which the session
 * makes and the outcome rules judge.
 */
import type { ProducePartitionResponse } from "../wire/produce.js";

/** One produce attempt: the broker's answer, or the error and whether the request may have gone out. */
export type Attempt =
  | { readonly answer: ProducePartitionResponse }
  | { readonly error: unknown; readonly sent: boolean };
