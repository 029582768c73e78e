import { afterAll } from "vitest";
import { removeDataDir, type SessiondProcess, startSessiond } from "../../harness/server.js";
import { FreezingProxy } from "./freezing-proxy.js";

/**
 * Servers (each with flags of its own) and proxies that one test file
 * starts for itself: all stopped, and the servers' data removed, after the
 * file's tests.
 */
export function ownServers(): {
  server(args: string[]): Promise<SessiondProcess>;
  proxy(port: number): Promise<FreezingProxy>;
} {
  const servers: SessiondProcess[] = [];
  const proxies: FreezingProxy[] = [];
  afterAll(async () => {
    for (const p of proxies) await p.close();
    for (const s of servers) {
      await s.stop();
      await removeDataDir(s.dataDir);
    }
  });
  return {
    async server(args) {
      const s = await startSessiond({ args });
      servers.push(s);
      return s;
    },
    async proxy(port) {
      const p = await FreezingProxy.start(port);
      proxies.push(p);
      return p;
    },
  };
}
