import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { makeCertificates } from "../harness/certs.js";
import { CHROMIUM, launch, noChromium, tempDataDir, ViewerServer } from "./viewer-harness.js";

/**
 * The viewer on a TLS port: the browser speaks HTTP/2 (ALPN) to the same
 * server for the page and for Connect, and the live follow works over it.
 */
describe.skipIf(CHROMIUM === undefined)("the web viewer over TLS (HTTP/2)", () => {
  let browser: Browser;
  let server: ViewerServer;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    const store = openStore({ dataDir });
    await store.create({ sessionId: "tls-session", title: "Over TLS" });
    await (await store.open(undefined, "tls-session")).append([
      userMessage("hello over h2", { id: "h1" }),
    ]);
    await store.close();
    const certs = makeCertificates(tempDataDir());
    server = new ViewerServer(dataDir, [], {
      cert: readFileSync(certs.serverCert),
      key: readFileSync(certs.serverKey),
    });
    await server.start();
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("serves the page and the API over h2 and follows the session live", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${server.url}/ui/#/w/default/s/tls-session`);
    await page.locator('#tree .row[data-id="h1"]').waitFor();
    await page.waitForSelector('#live[data-state="live"]');
    const protocols = (await page.evaluate(
      "[performance.getEntriesByType('navigation')[0].nextHopProtocol, ...performance.getEntriesByType('resource').map((e) => e.nextHopProtocol)]",
    )) as string[];
    expect(new Set(protocols)).toEqual(new Set(["h2"]));
    await context.close();
  });
});

if (CHROMIUM === undefined) noChromium("the web viewer over TLS (HTTP/2)");
