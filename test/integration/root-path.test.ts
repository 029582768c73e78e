/**
 * `GET /` on the API port (someone who opened the server's URL in a
 * browser, or curled it) points at the web viewer and says what the port
 * serves: a redirect to /ui/ with a short text body, over HTTP/1.1 and
 * HTTP/2, not a bare 404.
 */
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDataDir } from "../harness/server.js";
import { EXTERNAL, type SessiondProcess, skipExternal, startSessiond } from "./support/server.js";

if (EXTERNAL) skipExternal("GET / (needs a server of its own)");

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
}

async function getH1(baseUrl: string, path: string): Promise<Answer> {
  const res = await fetch(`${baseUrl}${path}`, { redirect: "manual" });
  return {
    status: res.status,
    location: res.headers.get("location") ?? undefined,
    body: await res.text(),
  };
}

function getH2(baseUrl: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const req = session.request({ ":method": "GET", ":path": path });
    const answer: Answer = { status: 0, location: undefined, body: "" };
    req.on("response", (h) => {
      answer.status = Number(h[":status"]);
      answer.location = h.location;
    });
    req.setEncoding("utf8");
    req.on("data", (d: string) => {
      answer.body += d;
    });
    req.on("end", () => {
      session.close();
      resolve(answer);
    });
    req.on("error", reject);
    req.end();
  });
}

describe.skipIf(EXTERNAL)("GET /", () => {
  let server: SessiondProcess;
  beforeAll(async () => {
    server = await startSessiond();
  });
  afterAll(async () => {
    await server?.stop();
    if (server) await removeDataDir(server.dataDir);
  });

  describe.each([
    ["HTTP/1.1", getH1],
    ["HTTP/2", getH2],
  ])("over %s", (_, get) => {
    it("redirects to the web viewer at /ui/", async () => {
      const answer = await get(server.url, "/");
      expect({ status: answer.status, location: answer.location }).toEqual({
        status: 302,
        location: "/ui/",
      });
    });

    it("says in its body where the viewer and the API are", async () => {
      const { body } = await get(server.url, "/");
      expect(body).toContain("/ui/");
      expect(body).toContain("/sessiond.v1.SessionService/");
      expect(body).toContain("/livez");
    });
  });

  it("leads a browser to the viewer's path", async () => {
    const res = await fetch(`${server.url}/`);
    await res.body?.cancel();
    expect(new URL(res.url).pathname).toBe("/ui/");
  });
});
