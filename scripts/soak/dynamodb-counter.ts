/**
 * An HTTP proxy in front of DynamoDB Local that counts every call by its operation
 * (X-Amz-Target), so the soak reports DynamoDB calls per minute of whatever sits behind it: the
 * bundles' SDK clients and the CLI's alike.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface CountingProxy {
  readonly endpoint: string;
  /** Calls so far, per operation (e.g. "Scan", "UpdateItem"). */
  counts(): Record<string, number>;
  stop(): Promise<void>;
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  const counts: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    const operation =
      String(req.headers["x-amz-target"] ?? "unknown")
        .split(".")
        .pop() ?? "unknown";
    counts[operation] = (counts[operation] ?? 0) + 1;
    const forward = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.once("error", () => {
      res.destroy();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function totalCalls(counts: Record<string, number>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
