/**
 * Serves `GET /metrics` (Prometheus text exposition) over node:http: one route, no dependency,
 * which a client library would not make shorter. Bound to the loopback by default, since the
 * metrics name topics and the host may be shared.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ReplicatorError } from "../errors.js";
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus-metrics.js";

export interface MetricsEndpoint {
  /** `http://host:port/metrics`, with the port the system chose for port 0. */
  readonly url: string;
  close(): Promise<void>;
}

export const DEFAULT_METRICS_HOST = "127.0.0.1";

/** Listens on `host:port`; a port in use or not ours to bind is METRICS_PORT_UNUSABLE naming both. */
export async function serveMetrics(
  render: () => Promise<string>,
  options: { readonly port: number; readonly host?: string },
): Promise<MetricsEndpoint> {
  const host = options.host ?? DEFAULT_METRICS_HOST;
  const server = createServer((request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics is served here\n");
      return;
    }
    render().then(
      (body) => response.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(body),
      (error: unknown) =>
        response
          .writeHead(500, { "content-type": "text/plain" })
          .end(`metrics unavailable: ${String(error)}\n`),
    );
  });
  await listen(server, options.port, host);
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/metrics`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const why =
        error.code === "EADDRINUSE"
          ? "is in use (another process listens there; choose another --metrics-port)"
          : `cannot be used (${error.code ?? error.message})`;
      reject(
        new ReplicatorError("METRICS_PORT_UNUSABLE", `metrics port ${port} on ${host} ${why}`, {
          cause: error,
          details: { host, port, errno: error.code },
        }),
      );
    });
    server.listen(port, host, () => resolve());
  });
}
