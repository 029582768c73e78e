import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, launch, noChromium, tempDataDir, ViewerServer } from "./viewer-harness.js";

/**
 * Usage in the viewer (issue 42 part 4): an assistant message's tokens and
 * cost in its pane; the session's total, its current path and each branch
 * (the abandoned one with what it cost beyond its fork point) in the
 * header, from GetUsage; in a share link, the same figures summed in the
 * page over the snapshot only (an abandoned branch's cost is not in it).
 */

const WS = "team";
const SESSION = "costly";

const spend = (inputTokens: number, outputTokens: number, cost?: string, reasoning = 0) => ({
  inputTokens: BigInt(inputTokens),
  outputTokens: BigInt(outputTokens),
  reasoningTokens: BigInt(reasoning),
  ...(cost === undefined ? {} : { cost: { amount: cost, currency: "USD" } }),
});

describe.skipIf(CHROMIUM === undefined)("usage in the viewer", () => {
  let server: ViewerServer;
  let browser: Browser;
  let shareToken = "";

  beforeAll(async () => {
    const dataDir = tempDataDir();
    const store = openStore({ dataDir });
    try {
      await store.create({ workspace: WS, sessionId: SESSION, title: "What it cost" });
      const s = await store.open(WS, SESSION);
      //   u1 ─ a1 ─ u2 ─ a2 ─ a4 (current)
      //          └─ u3 ─ a3 (abandoned)
      await s.append([
        userMessage("first", { id: "u1" }),
        assistantMessage("one", { id: "a1", model: "m", usage: spend(100, 10, "0.1", 4) }),
        userMessage("abandoned question", { id: "u3" }),
        assistantMessage("ABANDONED", { id: "a3", model: "m", usage: spend(50, 5, "0.05") }),
      ]);
      await s.rewind("a1", { entryId: "leaf1" });
      await s.append([
        userMessage("second", { id: "u2" }),
        assistantMessage("two", { id: "a2", model: "m", usage: spend(200, 20, "0.2") }),
        assistantMessage("three", { id: "a4", model: "m", usage: spend(1, 1) }),
      ]);
      shareToken = (await store.shares.create({ workspace: WS, session: SESSION })).token;
    } finally {
      await store.close();
    }
    server = new ViewerServer(dataDir);
    await server.start();
    browser = await launch();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function usageOf(page: Page, which: string): Promise<string> {
    const line = page.locator(`#usage [data-usage="${which}"]`);
    await line.waitFor();
    return (await line.textContent()) ?? "";
  }

  it("shows the session's, the current path's and each branch's usage, and a message's own", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/a1`);
      // GetUsage reads the whole tree: asked when the panel is opened.
      await page.locator("#usage > summary").click();
      expect(await usageOf(page, "total")).toBe(
        "session 4 msg · in 351 · out 36 (reasoning 4) · cache read 0 · cache write 0 · 0.35 USD · 1 unpriced",
      );
      expect(await usageOf(page, "path")).toContain("3 msg · in 301 · out 31");
      expect(await usageOf(page, "path")).toContain("0.3 USD · 1 unpriced");
      const abandoned = (await page.textContent('#usage li[data-branch="a3"]')) ?? "";
      expect(abandoned).toContain("(from a1)");
      expect(abandoned).toContain("1 msg · in 50 · out 5");
      expect(abandoned).toContain("0.05 USD");
      expect(await page.textContent('#usage li[data-branch="a4"]')).toContain("(current)");
      const a1 = page.locator('article.entry[data-entry="a1"] .usage');
      await a1.waitFor();
      expect(await a1.textContent()).toBe(
        "usage: in 100 · out 10 (reasoning 4) · cache read 0 · cache write 0 · cost 0.1 USD",
      );
    } finally {
      await page.close();
    }
  });

  it("in a share link: the snapshot's usage only (no abandoned branch, no request but ReadShare)", async () => {
    const page = await browser.newPage();
    const rpcs: string[] = [];
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith("/sessiond.")) rpcs.push(path);
    });
    try {
      await page.goto(`${server.url}/share/${shareToken}`);
      // A snapshot sums its own entries: the panel is open at once.
      expect(await usageOf(page, "total")).toBe(
        "session 3 msg · in 301 · out 31 (reasoning 4) · cache read 0 · cache write 0 · 0.3 USD · 1 unpriced",
      );
      expect(await usageOf(page, "path")).toContain("in 301");
      expect(await page.locator("#usage details").count()).toBe(0);
      expect(await page.textContent("#usage")).not.toContain("0.05");
      expect(new Set(rpcs)).toEqual(new Set(["/sessiond.v1.StoreService/ReadShare"]));
    } finally {
      await page.close();
    }
  });
});

if (CHROMIUM === undefined) noChromium("usage in the viewer");
