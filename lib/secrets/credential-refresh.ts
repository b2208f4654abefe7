/**
 * Secret rotation for long-lived connections: a warm Lambda container keeps its Kafka clients,
 * built with the password read at cold start. When a cluster refuses that password (it was
 * rotated), the clients are closed and rebuilt once with the secrets read afresh, past any cache,
 * and the call is tried again. A second refusal is the caller's error: the secret itself is wrong.
 */
import type { Logger } from "../core/ports.js";
import { describeError } from "../errors.js";
import { isAuthenticationFailure } from "../kafka/wire/security.js";

export interface Closeable {
  close(): Promise<void>;
}

/** Builds the connected resource; `fresh` is true for the rebuild after a refused login. */
export type ConnectedBuilder<R extends Closeable> = (fresh: boolean) => Promise<R>;

export class RefreshOnAuthFailure<R extends Closeable> {
  readonly #build: ConnectedBuilder<R>;
  readonly #logger: Logger;
  #current: Promise<R> | undefined;

  constructor(build: ConnectedBuilder<R>, logger: Logger) {
    this.#build = build;
    this.#logger = logger;
  }

  /** Runs `call` with the resource; after an authentication failure, rebuilds it fresh once and reruns. */
  async use<T>(call: (resource: R) => Promise<T>): Promise<T> {
    const resource = await this.#get(false);
    try {
      return await call(resource);
    } catch (error) {
      if (!isAuthenticationFailure(error)) throw error;
      this.#logger.warn("a cluster refused our credentials; re-reading the secrets once and reconnecting", {
        ...describeError(error),
      });
      this.#current = undefined;
      await resource.close().catch(() => undefined);
      return call(await this.#get(true));
    }
  }

  /** Built once and kept; a failed build is retried by the next call. */
  #get(fresh: boolean): Promise<R> {
    if (this.#current === undefined) {
      const pending = this.#build(fresh);
      this.#current = pending;
      pending.catch(() => {
        if (this.#current === pending) this.#current = undefined;
      });
    }
    return this.#current;
  }
}
