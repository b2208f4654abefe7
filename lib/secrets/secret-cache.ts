/**
 * Reads JSON secrets from Secrets Manager and keeps them for a while, so a warm Lambda container
 * does not call Secrets Manager on every invocation. Secret values never reach an error message
 * or a log line: errors name the secret's ARN only.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { ReplicatorError } from "../errors.js";

/** Where secrets come from: Secrets Manager in production (SecretCache), a fake in tests. */
export interface SecretSource {
  /** The secret's JSON object; `fresh` bypasses any cache (after an authentication failure). */
  json(secretArn: string, options?: { readonly fresh?: boolean }): Promise<Record<string, unknown>>;
}

export interface SecretCacheOptions {
  readonly client: SecretsManagerClient;
  /** How long a value is reused before it is read again (picks up rotation). @default 5 minutes */
  readonly ttlMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

interface Entry {
  readonly value: Promise<Record<string, unknown>>;
  readonly readAt: number;
}

export class SecretCache implements SecretSource {
  readonly #client: SecretsManagerClient;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();

  constructor(options: SecretCacheOptions) {
    this.#client = options.client;
    this.#ttlMs = options.ttlMs ?? 300_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The secret's JSON object. Throws CONFIG_INVALID when it is not a JSON object. `fresh` reads it
   * again whatever the cache holds (a rotated password after an authentication failure).
   */
  json(secretArn: string, options: { readonly fresh?: boolean } = {}): Promise<Record<string, unknown>> {
    const now = this.#now();
    const cached = this.#entries.get(secretArn);
    if (cached !== undefined && !options.fresh && now - cached.readAt < this.#ttlMs) return cached.value;
    const value = this.#read(secretArn);
    this.#entries.set(secretArn, { value, readAt: now });
    // A failed read must not be served from the cache until the TTL passes.
    value.catch(() => {
      if (this.#entries.get(secretArn)?.value === value) this.#entries.delete(secretArn);
    });
    return value;
  }

  async #read(secretArn: string): Promise<Record<string, unknown>> {
    let text: string | undefined;
    try {
      const output = await this.#client.send(new GetSecretValueCommand({ SecretId: secretArn }));
      text = output.SecretString;
    } catch (error) {
      const name = error instanceof Error ? error.name : "Error";
      throw new ReplicatorError("CONFIG_INVALID", `reading secret ${secretArn} failed: ${name}`, {
        cause: error,
        retryable: true,
        details: { secretArn },
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text ?? "");
    } catch {
      // The parser's message may quote the secret's text: leave it out.
      throw notAnObject(secretArn);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw notAnObject(secretArn);
    return parsed as Record<string, unknown>;
  }
}

function notAnObject(secretArn: string): ReplicatorError {
  return new ReplicatorError("CONFIG_INVALID", `secret ${secretArn} must hold a JSON object (SecretString)`, {
    details: { secretArn },
  });
}
