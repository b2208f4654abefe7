/** Resources to close, newest first; each close is bounded so cleanup itself cannot hang. */
export class Closers {
  readonly #closers: { name: string; close: () => Promise<void> }[] = [];
  readonly #timeoutMs: number;
  readonly #warn: (message: string) => void;

  constructor(warn: (message: string) => void, timeoutMs = 10_000) {
    this.#warn = warn;
    this.#timeoutMs = timeoutMs;
  }

  add(name: string, close: () => Promise<void> | void): void {
    this.#closers.push({ name, close: async () => close() });
  }

  async closeAll(): Promise<void> {
    for (const { name, close } of this.#closers.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${this.#timeoutMs} ms`)), this.#timeoutMs);
      });
      try {
        await Promise.race([close(), timeout]);
      } catch (error) {
        this.#warn(`closing ${name} failed: ${(error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
