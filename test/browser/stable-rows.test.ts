import type { Browser } from "playwright-core";
import { describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * While a big tree loads, the list is drawn again for every GetTree page
 * that arrives; a row whose drawing did not change keeps its element
 * (virtual-list.ts). Rows made anew on every page were replaced under the
 * pointer between a press and its release, and a click by Playwright
 * waited for the element to stop being detached (bench row v/click).
 * A row whose drawing changes (selected) is drawn anew.
 */
const ENTRIES = 30_000;
/** The messages, the root and the Leaf entry. */
const ROWS = ENTRIES;
const SESSION = "stable-rows";

async function writeSession(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ sessionId: SESSION, title: "stable rows" });
    const session = await store.open(undefined, SESSION);
    for (let done = 0; done < ENTRIES - 2; ) {
      const batch = [];
      for (let k = 0; k < 1000 && done < ENTRIES - 2; k++, done++) {
        batch.push({
          id: `m${done}`,
          kind: {
            case: "message" as const,
            value: {
              role: done % 2 === 0 ? Role.USER : Role.ASSISTANT,
              content: [{ part: { case: "text" as const, value: `message ${done}` } }],
            },
          },
        });
      }
      await session.append(batch);
    }
    // The leaf back at m10 (in the first page): the active path, which every
    // row's drawing shows, is known from the first rows on.
    await session.rewind("m10");
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("rows of a loading tree", () => {
  let browser: Browser;
  let server: ViewerServer;

  viewerFixture(writeSession, (f) => {
    ({ server, browser } = f);
  });

  it("keep their elements while later pages arrive; a selected row is drawn anew", {
    timeout: 120_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}/ui/#/w/default/s/${SESSION}`);
    const row = page.locator('#tree .row[data-id="m5"]');
    await row.waitFor();
    // Marked in the page as soon as its first rows are there, while the rest still loads.
    const loadingWhenMarked = await page.evaluate(`(() => {
      document.querySelector('#tree .row[data-id="m5"]').marked = true;
      return document.querySelector("#tree").getAttribute("data-complete") !== "true";
    })()`);
    expect(loadingWhenMarked).toBe(true);
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 60_000 });
    expect(await page.getAttribute("#tree", "data-count")).toBe(String(ROWS));
    const kept = () =>
      page.evaluate(`document.querySelector('#tree .row[data-id="m5"]')?.marked === true`);
    expect(await kept()).toBe(true);

    // Selecting it changes how it is drawn: a new element, marked selected.
    await row.click();
    await page.locator('#tree .row.selected[data-id="m5"]').waitFor();
    expect(await kept()).toBe(false);
    expect(await page.locator("#tree .row.selected").count()).toBe(1);
    await page.close();
  });
});

if (CHROMIUM === undefined) noChromium("rows of a loading tree");
