/**
 * `--log-level`: info (the default) writes a line per request but none per
 * probe or scrape; warn writes no line for calls that end normally or with
 * an expected error. (debug, which adds the probes, is in log-hygiene.test.ts.)
 */
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { getH1 } from "../support/prometheus.js";
import { user } from "./support/entries.js";
import { expectCode } from "./support/errors.js";
import { requestLog } from "./support/request-log.js";
import {
  client,
  EXTERNAL,
  type SessiondProcess,
  skipExternal,
  startSessiond,
  uniqueWorkspace,
} from "./support/server.js";
import { eventually } from "./support/stream.js";

if (EXTERNAL) skipExternal("--log-level (needs servers of its own)");

let server: SessiondProcess | undefined;
afterEach(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
  server = undefined;
});

/** A successful call, an expected refusal (NOT_FOUND) and a probe, then a last call to wait for. */
async function traffic(s: SessiondProcess): Promise<string> {
  const c = client(s.url, "grpc", { retry: false });
  const ws = uniqueWorkspace("level");
  const id = (await c.store.createSession({ workspace: ws })).session?.id ?? "";
  await expectCode(
    c.session.append({ workspace: ws, session: "missing", entries: [user("x")] }),
    Code.NotFound,
  );
  expect((await getH1(s.url, "/readyz")).status).toBe(200);
  await c.session.getState({ workspace: ws, session: id });
  return ws;
}

describe.skipIf(EXTERNAL)("--log-level", () => {
  it("info (the default) logs each call at level info, and no probe", async () => {
    server = await startSessiond();
    const s = server;
    await traffic(s);
    await eventually(
      () => requestLog(s).some((l) => l.method === "sessiond.v1.SessionService/GetState"),
      5_000,
      "the GetState line",
    );
    const lines = requestLog(s);
    expect(lines.map((l) => [l.method, l.code, l.level])).toEqual([
      ["sessiond.v1.StoreService/CreateSession", "ok", "info"],
      ["sessiond.v1.SessionService/Append", "NotFound", "info"],
      ["sessiond.v1.SessionService/GetState", "ok", "info"],
    ]);
  });

  it("warn logs nothing for calls that succeed or fail as expected", async () => {
    const s = await startSessiond({ args: ["--log-level", "warn"] });
    await traffic(s);
    // Stopped, so that every line it wrote has arrived.
    expect(await s.stop()).toBe(0);
    await removeDataDir(s.dataDir);
    expect(requestLog(s)).toEqual([]);
  });

  it("refuses a level it does not know", async () => {
    await expect(startSessiond({ args: ["--log-level", "verbose"] })).rejects.toThrow(
      /--log-level must be error, warn, info, debug/,
    );
  });
});
