import { createServer, type Server } from "node:net";

/** A TCP port on loopback that was free a moment ago (the OS picks it; the caller binds it next). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") resolve(address.port);
        else reject(new Error("could not pick a free port"));
      });
    });
  });
}

/** Whether a TCP server can listen on 127.0.0.1:`port` now (it is closed again at once). */
export async function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** `server` listening on a port of loopback the OS picks; that port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address !== "object") throw new Error("the listener has no port");
  return address.port;
}
