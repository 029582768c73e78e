import net from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a server that can make its open
 * connections go dead the way a lost host or a dropped NAT entry does: no
 * FIN, no RST, just silence in both directions. Connections made after
 * `freeze` are forwarded as usual (the server is still there; the path to
 * it is new).
 */
export class FreezingProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  /** Every socket still open, frozen ones included (closed at the end). */
  private readonly sockets = new Set<net.Socket>();
  /** Connections accepted so far. */
  accepted = 0;

  private constructor(targetPort: number) {
    this.server = net.createServer((client) => {
      this.accepted++;
      const upstream = net.connect({ host: "127.0.0.1", port: targetPort });
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      this.sockets.add(client);
      this.sockets.add(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      const drop = () => {
        this.pairs.delete(pair);
        this.sockets.delete(client);
        this.sockets.delete(upstream);
        client.destroy();
        upstream.destroy();
      };
      client.on("error", drop);
      upstream.on("error", drop);
      client.on("close", drop);
      upstream.on("close", drop);
    });
  }

  static async start(targetPort: number): Promise<FreezingProxy> {
    const p = new FreezingProxy(targetPort);
    await new Promise<void>((resolve) => p.server.listen(0, "127.0.0.1", resolve));
    return p;
  }

  get url(): string {
    const addr = this.server.address() as net.AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  /**
   * Every open connection stops carrying bytes, both ways, and stays open:
   * what either side writes is read and thrown away, so neither sees an
   * error or a close.
   */
  freeze(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.removeAllListeners("data");
      upstream.removeAllListeners("data");
      client.on("data", () => {});
      upstream.on("data", () => {});
    }
    this.pairs.clear();
  }

  async close(): Promise<void> {
    this.server.close();
    for (const s of this.sockets) s.destroy();
  }
}
