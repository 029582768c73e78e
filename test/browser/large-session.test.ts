import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { openStore } from "../../src/index.js";
import {
  CHROMIUM,
  launch,
  noChromium,
  screenshotPath,
  tempDataDir,
  ViewerServer,
} from "./viewer-harness.js";

/**
 * A 100,000-entry session in the viewer: it opens (the first GetTree page is
 * drawn while the rest stream in), the DOM holds only the rows in view, and
 * it scrolls to its end. The session is written through the embedded store
 * in batches (seconds; appends over RPC would take minutes), then served.
 * The open time is measured and printed (no timed assertion: the machine is
 * shared); the bar is 2 s.
 */
const ENTRIES = Number(process.env.SESSIOND_LARGE_SESSION_ENTRIES ?? 100_000);
const MESSAGES = ENTRIES - 1;
const SESSION = "large-session";
const LAST = `m${MESSAGES - 1}`;

async function writeSession(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ sessionId: SESSION, title: "large" });
    const session = await store.open(undefined, SESSION);
    for (let done = 0; done < MESSAGES; ) {
      const batch = [];
      for (let k = 0; k < 1000 && done < MESSAGES; k++, done++) {
        const role = done % 2 === 0 ? Role.USER : Role.ASSISTANT;
        batch.push({
          id: `m${done}`,
          kind: {
            case: "message" as const,
            value: {
              role,
              content: [
                { part: { case: "text" as const, value: `message ${done} of the large session` } },
              ],
            },
          },
        });
      }
      await session.append(batch);
    }
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)(`a ${ENTRIES}-entry session in the viewer`, () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    const t0 = performance.now();
    await writeSession(dataDir);
    console.log(
      `large session: ${ENTRIES} entries written in ${Math.round(performance.now() - t0)} ms`,
    );
    server = new ViewerServer(dataDir);
    await server.start();
    browser = await launch();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A user-timing mark of the viewer (session-view.ts): its newest time, ms since navigation. */
  const mark = async (name: string): Promise<number> => {
    const times = (await page.evaluate(
      `performance.getEntriesByName(${JSON.stringify(name)}).map((e) => e.startTime)`,
    )) as number[];
    return Math.round(times[times.length - 1] ?? Number.NaN);
  };

  it("opens with the first rows drawn, keeps the DOM small, and scrolls to its end", {
    timeout: 120_000,
  }, async () => {
    // A deep link in a new tab: the page, its script and the session, the server's first read of it.
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.url}/ui/#/w/default/s/${SESSION}`);
    await page.locator('#tree .row[data-id="m0"]').waitFor();
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 60_000 });
    console.log(
      `large session, cold (new tab, first read by the server): first rows ${await mark("sessiond:first-rows")} ms after navigation, whole tree ${await mark("sessiond:tree-complete")} ms (${ENTRIES} entries)`,
    );
    expect(await page.getAttribute("#tree", "data-count")).toBe(String(ENTRIES));
    // Virtualised: a few dozen rows, not 100,000.
    expect(await page.locator("#tree .row").count()).toBeLessThan(200);

    await page.focus("#tree");
    await page.keyboard.press("End");
    const last = page.locator(`#tree .row[data-id="${LAST}"]`);
    await last.waitFor();
    expect(await last.isVisible()).toBe(true);
    expect(await last.textContent()).toContain(`message ${MESSAGES - 1} of the large session`);
    expect(await page.locator("#tree .row").count()).toBeLessThan(200);

    // The last entry's details: one GetEntries page by seq, not the log.
    await last.click();
    await page.locator(`article.entry[data-entry="${LAST}"]`).waitFor();
    expect(await page.textContent("article.entry")).toContain(`seq ${ENTRIES}`);
    await page.screenshot({ path: screenshotPath("large-session.png") });

    // The state at the last entry: 99,999 messages, read page by page, opened at that entry.
    await page.click('a[data-tab="context"]');
    await page.locator(`ol.state-messages > li.at[data-entry="${LAST}"]`).waitFor({
      timeout: 60_000,
    });
    await page.locator("h3", { hasText: `${MESSAGES} messages` }).waitFor({ timeout: 60_000 });
    expect(await page.locator("ol.state-messages > li").count()).toBeLessThanOrEqual(200);
    expect(await page.locator('ol.state-messages > li[data-entry="m0"]').count()).toBe(0);

    // Opened again from the list, as a user does (the server has read the session).
    await page.goto(`${server.url}/ui/#/w/default`);
    await page.locator("tr.session-row").first().waitFor();
    await page.click(`tr.session-row[data-session="${SESSION}"] a`);
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 60_000 });
    const open = await mark("sessiond:session-open");
    console.log(
      `large session, warm (from the list): first rows ${(await mark("sessiond:first-rows")) - open} ms after the click, whole tree ${(await mark("sessiond:tree-complete")) - open} ms`,
    );
  });
});

if (CHROMIUM === undefined) noChromium("a large session in the viewer");
