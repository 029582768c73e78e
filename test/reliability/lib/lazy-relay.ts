/**
 * The negative control of T12 (`lazyPort`): a TCP relay in front of the
 * server that connects to it only when the client has sent its first
 * bytes, so the server's SETTINGS reach the client only in reply to its
 * preface, as the plaintext port sent them before it spoke first to a
 * silent connection. T12 must catch it.
 */
import net from "node:net";

export interface LazyRelay {
  /** Stops listening and cuts every relayed connection (a server going down). */
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` and relays each connection to `upstream` from its first bytes on. */
export async function lazyRelay(port: number, upstream: number): Promise<LazyRelay> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    client.once("data", (first: Buffer) => {
      client.pause();
      const server = net.connect(upstream, "127.0.0.1", () => {
        server.write(first);
        client.pipe(server);
        server.pipe(client);
        client.resume();
      });
      track(server);
      server.once("close", () => client.destroy());
      client.once("close", () => server.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
