import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { assistantMessage, toolResult, userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { CHROMIUM, noChromium, type ViewerServer, viewerFixture } from "./viewer-harness.js";

/**
 * HTML inside message text is something the author wrote about, not markup
 * (issue 37, item 2): prose that names tags shows them as written, and a
 * tool's output (an HTML file it read) is shown as text, never rendered.
 */

const WS = "team";
const SESSION = "html-prose";
const PROSE = 'Wrap the form in a <div class="card"> and replace <input name=q> with <textarea>.';
const BLOCK = '<div class="card">\n<b>not bold</b>\n</div>\n\nand **bold** after it';
const HTML_FILE = [
  "<!doctype html>",
  "<html><body>",
  '<h1 id="tool-heading">Welcome</h1>',
  '<form action="/search"><input name="q"><button>Go</button></form>',
  "</body></html>",
].join("\n");

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: "HTML in prose" });
    await (await store.open(WS, SESSION)).append([
      userMessage(PROSE, { id: "u1" }),
      assistantMessage(BLOCK, {
        id: "a1",
        toolCalls: [{ id: "call1", name: "read_file", args: { path: "index.html" } }],
      }),
      toolResult("call1", HTML_FILE, { id: "t1", toolName: "read_file" }),
    ]);
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("HTML in message text, in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  const open = async (id: string) => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/${id}`);
    await page.locator(`article.entry[data-entry="${id}"] .message`).waitFor();
    return page.locator(`article.entry[data-entry="${id}"] .message`);
  };

  it("prose naming tags shows them as written, and the tags are not in the page", async () => {
    const message = await open("u1");
    expect((await message.locator(".part.text").textContent())?.trim()).toBe(PROSE);
    expect(await message.locator("div.card, input, textarea").count()).toBe(0);
  });

  it("a block of HTML in markdown is shown as text while the markdown around it still renders", async () => {
    const message = await open("a1");
    const text = await message.locator(".part.text").textContent();
    expect(text).toContain('<div class="card">');
    expect(text).toContain("<b>not bold</b>");
    expect(text).toContain("</div>");
    expect(await message.locator("div.card, .part.text b").count()).toBe(0);
    expect(await message.locator(".part.text strong").textContent()).toBe("bold");
  });

  it("a tool's output is shown as its text, never rendered: the HTML file it read reads as source", async () => {
    const message = await open("t1");
    expect(await message.locator(":scope > .part").textContent()).toBe(HTML_FILE);
    expect(await message.locator("h1, form, input, button").count()).toBe(0);
    expect(await page.locator("#tool-heading").count()).toBe(0);
  });

  it("the HISTORY view shows the same text as the entry pane", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${SESSION}/e/t1?tab=history`);
    await page.locator('ol.state-messages > li[data-entry="t1"]').waitFor();
    const state = page.locator("ol.state-messages");
    expect((await state.locator('li[data-entry="u1"] .part.text').textContent())?.trim()).toBe(
      PROSE,
    );
    expect(await state.locator('li[data-entry="t1"] .message > .part').textContent()).toBe(
      HTML_FILE,
    );
    expect(await state.locator("div.card, h1, form, input, textarea").count()).toBe(0);
  });
});

if (CHROMIUM === undefined) noChromium("HTML in message text, in Chromium");
