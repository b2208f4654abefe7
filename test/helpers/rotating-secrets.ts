import type { SecretSource } from "../../lib/secrets/secret-cache.js";

/** Our secret-source interface, in memory: a cached value, and a newer one only a fresh read sees. */
export class RotatingSecrets implements SecretSource {
  reads: { fresh: boolean }[] = [];
  constructor(
    public cached: Record<string, unknown>,
    public current: Record<string, unknown> = cached,
  ) {}
  async json(_arn: string, options: { fresh?: boolean } = {}) {
    this.reads.push({ fresh: options.fresh ?? false });
    return options.fresh ? this.current : this.cached;
  }
}
