import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import {
  assistantMessage,
  customEntry,
  modelChange,
  userMessage,
} from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import {
  CHROMIUM,
  noChromium,
  sessiondCommand,
  type ViewerServer,
  viewerFixture,
} from "./viewer-harness.js";

/**
 * The smaller viewer shortfalls of issue 37, item 9, one test each: the
 * diff's badges for non-message kinds, the header's counts under live
 * appends, bidi controls in titles and text, and long titles and tags that
 * overflowed the page.
 */

const WS = "team";
const RLO = "\u202E";
const BIDI_TITLE = `Fix ${RLO}gol.exe${"\u202C"} now`;
const LONG_TITLE = `${"Averyveryverylongtitlewithoutanyspaces".repeat(12)} end`;
const LONG_TAGS: Record<string, string> = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [
    `tag${i}`,
    `${"value-without-breaks".repeat(i === 0 ? 12 : 1)}`,
  ]),
);

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: "kinds", title: "Kinds in a diff" });
    const kinds = await store.open(WS, "kinds");
    await kinds.append([
      userMessage("start", { id: "u1" }),
      modelChange("bigger-model", { id: "m1", provider: "anthropic" }),
      customEntry("planner", { step: 1 }, { id: "x1" }),
      userMessage("branch A", { id: "ua" }),
    ]);
    await kinds.rewind("u1", { entryId: "leaf1" });
    await kinds.append([userMessage("branch B", { id: "ub" })]);

    await store.create({ workspace: WS, sessionId: "live", title: "Live counts" });
    await (await store.open(WS, "live")).append([
      userMessage("first", { id: "l1" }),
      assistantMessage("second", { id: "l2" }),
    ]);

    await store.create({ workspace: WS, sessionId: "bidi", title: BIDI_TITLE });
    await (await store.open(WS, "bidi")).append([
      userMessage(`Open ${RLO}fdp.exe please`, { id: "b1" }),
    ]);

    await store.create({ workspace: WS, sessionId: "long", title: LONG_TITLE, tags: LONG_TAGS });
    await (await store.open(WS, "long")).append([userMessage("short", { id: "s1" })]);
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("session view details in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  });

  it("non-message kinds keep their badge in the diff, as in the tree", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/kinds/diff/ua/ub`);
    await page.locator("section.diff").waitFor();
    const badges = await page
      .locator("li.diff-row")
      .evaluateAll((rows) =>
        rows.map((r) => [r.getAttribute("data-entry"), r.querySelector(".badge")?.textContent]),
      );
    expect(badges).toEqual([
      ["m1", "model"],
      ["x1", "custom"],
      ["ua", "user"],
      ["ub", "user"],
    ]);
  });

  it("the header's counts follow live appends", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/live`);
    await page.waitForSelector('#live[data-state="live"]');
    await page.locator(".session-head", { hasText: "messages" }).waitFor();
    for (const [id, text] of [
      ["l3", "third"],
      ["l4", "fourth"],
    ] as const) {
      const done = await sessiondCommand(server.url, [
        "append",
        "live",
        text,
        "-w",
        WS,
        "--id",
        id,
      ]);
      expect(done.stderr).toBe("");
    }
    await page.locator('#tree .row[data-id="l4"]').waitFor({ timeout: 10_000 });
    const meta = (
      await createSessiondClient({ baseUrl: server.url }).store.getSession({
        workspace: WS,
        session: "live",
      })
    ).session;
    const want = `${meta?.entryCount} entries · ${meta?.messageCount} messages`;
    expect(meta?.messageCount).toBe(4n);
    await expect
      .poll(() => page.locator(".session-head").textContent(), { timeout: 5000 })
      .toContain(want);
  });

  it("bidi controls in a title or message show as visible marks and never reach the page", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    const row = page.locator('tr.session-row[data-session="bidi"]');
    await row.waitFor();
    expect(await row.locator("a").textContent()).toBe("Fix [U+202E]gol.exe[U+202C] now");

    await page.goto(`${server.url}/ui/#/w/${WS}/s/bidi/e/b1`);
    await page.locator('article.entry[data-entry="b1"] .md').waitFor();
    await page.locator(".session-head h2").waitFor();
    expect(await page.locator(".session-head h2").textContent()).toBe(
      "Fix [U+202E]gol.exe[U+202C] now",
    );
    expect(await page.locator('#tree .row[data-id="b1"] .preview').textContent()).toBe(
      "Open [U+202E]fdp.exe please",
    );
    expect((await page.locator("article.entry .md").textContent())?.trim()).toBe(
      "Open [U+202E]fdp.exe please",
    );
    expect(await page.evaluate("document.body.textContent.includes('\\u202E')")).toBe(false);
  });

  it("a long title and many long tags wrap inside the page instead of overflowing it", async () => {
    const overflow = () =>
      page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator('tr.session-row[data-session="long"]').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);

    await page.goto(`${server.url}/ui/#/w/${WS}/s/long`);
    await page.locator(".session-head h2").waitFor();
    await page.locator(".session-head .badge.tag").first().waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    const head = await page
      .locator(".session-head")
      .evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(head.scroll).toBeLessThanOrEqual(head.client);
  });
});

if (CHROMIUM === undefined) noChromium("session view details in Chromium");
