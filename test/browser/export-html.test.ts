import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { deflateSync } from "node:zlib";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistantMessage,
  labelEntry,
  toolResult,
  userMessage,
} from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { runCli } from "../harness/cli.js";
import {
  builtUi,
  CHROMIUM,
  launch,
  noChromium,
  screenshotPath,
  tempDataDir,
  ViewerServer,
} from "./viewer-harness.js";

/**
 * `sessiond export --format html` (issue 42): one file that shows the
 * session in the viewer's own rendering with no server and no network. The
 * page is exported from a live server, the server is stopped, and the file
 * is opened from file:// in a context where every request is intercepted
 * and recorded: none may be made while the tree is walked (a click on a row,
 * a folded branch unfolded, the context at an entry, an inline image, a blob
 * over the limit), and the viewer's XSS battery plus payloads aimed at the
 * embedding itself (closing the data element, opening a comment, U+2028)
 * stay inert text.
 */

const WS = "team";
const SESSION = "exported";
const XSS_TEXT = [
  "<script>window.__xss = 'script'</script>",
  '<img src="x" onerror="window.__xss = \'img\'">',
  "[click me](javascript:window.__xss='link') and [also](JAVASCRIPT:alert(1))",
  "![remote](https://example.invalid/pixel.png) and <https://example.invalid/page>",
].join("\n\n");
/** Aimed at the page's embedding: end the JSON element, start a comment, break a JS string. */
const EMBED_TEXT =
  "</script><script>window.__xss='data';alert('data')</script> <!-- <script> \u2028\u2029 & &amp; </ScRiPt >";
const TITLE = "Hostile </title><script>window.__xss='title'</script> export";
const BIG_TEXT = Array.from({ length: 20000 }, (_, i) => `log line ${i}`).join("\n");

function crc32(buf: Uint8Array): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A 200 × 200 RGB PNG of noise (~120 KB: over the 64 KiB blob threshold). */
function noisePng(): Uint8Array {
  const w = 200;
  const rows: Buffer[] = [];
  let x = 4242;
  for (let y = 0; y < w; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let i = 1; i < row.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      row[i] = x >> 16;
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(w, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", deflateSync(Buffer.concat(rows))),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: WS, sessionId: SESSION, title: TITLE });
    const s = await store.open(WS, SESSION);
    await s.append([
      userMessage("Fix the login bug", { id: "u1" }),
      assistantMessage("I'll read the file.", {
        id: "a1",
        thinking: "The bug is probably in auth.ts",
        toolCalls: [{ id: "call1", name: "read_file", args: { path: "src/auth.ts" } }],
        model: "claude-test",
        provider: "anthropic",
      }),
      toolResult("call1", "<h1 id='tool-heading'>export function login()</h1>", {
        id: "t1",
        toolName: "read_file",
      }),
      assistantMessage("The **token check** is inverted.", { id: "a2" }),
      labelEntry("before-fix", { id: "l1" }),
      userMessage("Try approach A", { id: "ua" }),
      assistantMessage("Approach A: patch the comparison.", { id: "aa" }),
    ]);
    await s.rewind("a2", { entryId: "leaf1" });
    await s.append([
      userMessage(XSS_TEXT, { id: "x1" }),
      assistantMessage(EMBED_TEXT, { id: "x2" }),
      {
        id: "shot",
        kind: {
          case: "message",
          value: {
            role: Role.USER,
            content: [
              { part: { case: "text", value: "the screen now" } },
              { part: { case: "image", value: { mimeType: "image/png", data: noisePng() } } },
            ],
          },
        },
      },
      userMessage(BIG_TEXT, { id: "big" }),
      {
        id: "c1",
        kind: {
          case: "compaction",
          value: {
            summary: "Summary: login bug found in auth.ts (inverted check).",
            replacesEntryIds: ["u1", "a1", "t1"],
          },
        },
      },
      assistantMessage("Done: the tests pass.", { id: "a5" }),
    ]);
  } finally {
    await store.close();
  }
}

const rowOf = (page: Page, id: string) => page.locator(`#tree .row[data-id="${id}"]`);

describe.skipIf(CHROMIUM === undefined)("an HTML export opened from a file in Chromium", () => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let file: string;
  let html: string;
  /** Every request that reached the interception (none may), except the file itself. */
  const routed: string[] = [];
  /**
   * Every request the page started, with its fate. The only ones allowed
   * are those the page's own CSP stopped before they left the browser
   * ("csp": a remote image in a message's markdown); each is recorded.
   */
  const attempts = new Map<Request, string>();
  const noNetwork = async () => {
    expect(routed).toEqual([]);
    await expect
      .poll(() =>
        [...attempts].filter(([, fate]) => fate !== "csp").map(([r, f]) => `${r.url()} ${f}`),
      )
      .toEqual([]);
  };
  const dialogs: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    const dataDir = tempDataDir();
    await seed(dataDir);
    const server = new ViewerServer(dataDir);
    await server.start();
    const out = mkdtempSync(join(tmpdir(), "sessiond-export-html-"));
    file = join(out, "session.html");
    try {
      const res = await runCli(
        [
          "export",
          SESSION,
          "-w",
          WS,
          "--format",
          "html",
          // The image (~120 KB) is in the page; the ~290 KB log is not.
          "--max-inline-bytes",
          "200000",
          "--ui-dir",
          await builtUi(),
          "--server",
          server.url,
        ],
        { timeoutMs: 60_000 },
      );
      expect(res.stderr).toBe("");
      expect(res.code).toBe(0);
      writeFileSync(file, res.stdout);
      html = res.stdout;
    } finally {
      // The page must not need the server: it is gone before the page opens.
      await server.stop();
    }
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const own = pathToFileURL(file).href;
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url === own) return route.continue();
      routed.push(url);
      return route.abort();
    });
    page = await context.newPage();
    page.on("request", (r) => {
      if (r.url() !== own) attempts.set(r, "started");
    });
    page.on("requestfailed", (r) => {
      if (attempts.has(r)) attempts.set(r, r.failure()?.errorText ?? "failed");
    });
    page.on("requestfinished", (r) => {
      if (attempts.has(r)) attempts.set(r, "finished");
    });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(own);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("is one file: the viewer's script and style inline, the data as JSON, a CSP without connections", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    // No reference to anything outside the page.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i);
    // Exactly one element closes each script: no text from the session does.
    expect(html.match(/<\/script/gi)?.length).toBe(2);
    expect(html).not.toContain(EMBED_TEXT);
  });

  it("opens at the current leaf with the tree drawn, and no request at all", async () => {
    await page.locator('article.entry[data-entry="a5"]').waitFor();
    expect(await page.textContent('article.entry[data-entry="a5"]')).toContain(
      "Done: the tests pass.",
    );
    expect(await rowOf(page, "a5").getAttribute("class")).toContain("on-path");
    expect(await rowOf(page, "a5").textContent()).toContain("leaf");
    expect(await page.textContent(".session-head h2")).toBe(TITLE);
    await page.screenshot({ path: screenshotPath("export-html.png") });
    await noNetwork();
  });

  it("navigates: a click on a row shows its entry, a folded branch unfolds, the context at an entry shows", async () => {
    await rowOf(page, "a1").click();
    await page.locator('article.entry[data-entry="a1"]').waitFor();
    const a1 = await page.textContent("article.entry");
    expect(a1).toContain("I'll read the file.");
    expect(a1).toContain("read_file");
    expect(a1).toContain("src/auth.ts");
    // The abandoned branch is folded; unfolded, its entries show like any other.
    expect(await rowOf(page, "aa").count()).toBe(0);
    await rowOf(page, "l1").locator("button.fold").click();
    await rowOf(page, "aa").click();
    await page.locator('article.entry[data-entry="aa"]').waitFor();
    expect(await page.textContent("article.entry")).toContain("Approach A: patch the comparison.");
    // The context at the leaf: the compaction stands for u1, a1 and t1.
    await rowOf(page, "a5").click();
    await page.locator('article.entry[data-entry="a5"]').waitFor();
    await page.click('a[data-tab="context"]');
    await page.locator('ol.state-messages > li[data-entry="a5"]').waitFor();
    const context = await page
      .locator("ol.state-messages > li")
      .evaluateAll((li) => li.map((l) => l.getAttribute("data-entry")));
    expect(context[0]).toBe("c1");
    expect(context).not.toContain("u1");
    expect(context).not.toContain("aa");
    expect(context).toContain("x2");
    expect(await page.textContent("ol.state-messages")).toContain("login bug found in auth.ts");
    await page.click('a[data-tab="entry"]');
    await page.locator('article.entry[data-entry="a5"]').waitFor();
    await noNetwork();
  });

  it("draws an inline image from the page's own bytes, and says a blob over the limit is left out", async () => {
    await rowOf(page, "shot").click();
    const img = page.locator('article.entry[data-entry="shot"] .part.image img');
    await img.waitFor();
    const width = () =>
      img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth);
    for (let i = 0; i < 100 && (await width()) === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await width()).toBe(200);
    expect(await img.getAttribute("src")).toMatch(/^blob:/);

    await rowOf(page, "big").click();
    const box = page.locator('article.entry[data-entry="big"] .part.blob.text');
    await box.waitFor();
    expect(await box.textContent()).toContain("log line 0");
    await page.click("article.entry button.load-blob");
    await page.locator("article.entry .part.blob .error").waitFor();
    expect(await page.textContent("article.entry .part.blob .error")).toContain(
      "is not in this export",
    );
    await noNetwork();
  });

  it("keeps the XSS payloads inert: shown as text, no script run, no dialog, nothing fetched", async () => {
    await rowOf(page, "x1").click();
    await page.locator('article.entry[data-entry="x1"]').waitFor();
    expect(await rowOf(page, "x1").textContent()).toContain("<script>");
    const md = page.locator('article.entry[data-entry="x1"] .md');
    expect(await md.textContent()).toContain("<script>window.__xss = 'script'</script>");
    expect(await md.locator("script, img[onerror]").count()).toBe(0);
    const hrefs = await md.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    for (const href of hrefs) expect(href ?? "").not.toMatch(/^\s*javascript:/i);

    await rowOf(page, "x2").click();
    await page.locator('article.entry[data-entry="x2"]').waitFor();
    const x2 = (await page.textContent('article.entry[data-entry="x2"] .md')) ?? "";
    expect(x2).toContain("</script><script>window.__xss='data';alert('data')</script>");
    expect(x2).toContain("<!-- <script>");
    await page.click('a[data-tab="history"]');
    await page.locator('ol.state-messages > li[data-entry="x2"]').waitFor();

    expect(await page.evaluate("window.__xss")).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(await page.locator("#tool-heading").count()).toBe(0);
    expect(await page.title()).toBe(`${TITLE} · sessiond`);
    expect(await page.locator("head script").count()).toBe(2);
    expect(await page.locator("body script").count()).toBe(0);
    await noNetwork();
    // The remote image in x1's markdown was tried, and stopped by the CSP.
    expect([...attempts.keys()].map((r) => r.url())).toContain("https://example.invalid/pixel.png");
  });

  it("the file holds the whole session: every entry is in the data element", () => {
    const json = /<script type="application\/json" id="sessiond-export">([^<]*)<\/script>/.exec(
      readFileSync(file, "utf8"),
    )?.[1];
    const data = JSON.parse(json ?? "null") as {
      entries: { id: string }[];
      omittedBlobs: Record<string, string>;
    };
    expect(data.entries.map((e) => e.id)).toContain("x2");
    expect(data.entries).toHaveLength(15);
    expect(Object.values(data.omittedBlobs)).toHaveLength(1);
  });
});

if (CHROMIUM === undefined) noChromium("an HTML export opened from a file in Chromium");
