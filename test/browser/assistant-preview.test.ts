import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * A reply that thought first previews as its reply (issue 37, item 9): the
 * tree row of an assistant entry reads what it said, not its thinking.
 */

const WS = "team";
const SESSION = "thinks-first";

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "thinks first" });
    await (await store.open(WS, SESSION)).append([
      userMessage("Fix the login bug", { id: "u1" }),
      assistantMessage("Here is the fix", { id: "a1", thinking: "secret plan" }),
    ]);
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("the preview of an assistant row, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  it("an assistant row that thought first previews its reply, not its thinking", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}`);
    const preview = page.locator('#tree .row[data-id="a1"] .preview');
    await preview.waitFor();
    expect(await preview.textContent()).toMatch(/^Here is the fix/);
  });
});

if (CHROMIUM === undefined) noChromium("the preview of an assistant row, in Chromium");
