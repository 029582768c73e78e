import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assistantMessage, toolResult, userMessage } from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import { type RunningServer, serverConfig, startServer } from "../../src/server/index.js";
import type { SessionStore } from "../../src/store/index.js";
import { runCli } from "../harness/cli.js";
import { builtUi, CHROMIUM, launch, noChromium, screenshotPath } from "./viewer-harness.js";

/**
 * Share links in the viewer (issue 42): `sessiond share` prints a link; the
 * page at /share/<token> shows the snapshot (the path root -> entry, the
 * viewer's own rendering) in a browser that has no token for a server that
 * wants one, asks the server for nothing but ReadShare, keeps the viewer's
 * XSS battery inert, leaves out what the share omits, and shows a 404 page
 * once the link is revoked or expired (the server's clock is moved: no
 * sleeps).
 */

const WS = "team";
const SESSION = "shared";
const TOKEN = "browser-share-test-token-0123456789abcdef";
const TITLE = "Login bug </title><script>window.__xss='title'</script> shared";
const XSS_TEXT = [
  "<script>window.__xss = 'script'</script>",
  '<img src="x" onerror="window.__xss = \'img\'">',
  "[click me](javascript:window.__xss='link') and [also](JAVASCRIPT:alert(1))",
  "![remote](https://example.invalid/pixel.png) and <https://example.invalid/page>",
].join("\n\n");

let nowMs = Date.now();

async function seed(store: SessionStore): Promise<void> {
  await store.create({ workspace: WS, sessionId: SESSION, title: TITLE });
  const s = await store.open(WS, SESSION);
  await s.append([
    userMessage("Fix the login bug", { id: "u1" }),
    assistantMessage("I'll read the file.", {
      id: "a1",
      thinking: "THINKING: the bug is probably in auth.ts",
      toolCalls: [{ id: "call1", name: "read_file", args: { path: "src/auth.ts" } }],
      model: "claude-test",
      provider: "anthropic",
      usage: { inputTokens: 1200n, outputTokens: 80n, cacheReadTokens: 1000n },
    }),
    toolResult("call1", "<h1 id='tool-heading'>export function login()</h1>", {
      id: "t1",
      toolName: "read_file",
    }),
    assistantMessage("The **token check** is inverted.", { id: "a2" }),
    userMessage("Try approach A", { id: "ua" }),
    assistantMessage("ABANDONED approach A", { id: "aa" }),
  ]);
  await s.rewind("a2", { entryId: "leaf1" });
  await s.append([
    userMessage(XSS_TEXT, { id: "x1" }),
    assistantMessage("Done: the tests pass.", {
      id: "a5",
      usage: { inputTokens: 2400n, outputTokens: 120n },
    }),
  ]);
}

/** A plain session for the screenshot the docs show. */
async function seedDemo(store: SessionStore): Promise<string> {
  await store.create({ workspace: WS, sessionId: "demo", title: "Fix the login redirect loop" });
  const s = await store.open(WS, "demo");
  const cost = (amount: string) => ({ amount, currency: "USD" });
  await s.append([
    userMessage("Users get a redirect loop after logging in. Can you find out why?", { id: "d1" }),
    assistantMessage("Let me look at the session middleware.", {
      id: "d2",
      thinking: "The loop is probably between /login and the auth guard.",
      toolCalls: [{ id: "c1", name: "read_file", args: { path: "src/middleware/session.ts" } }],
      model: "claude-sonnet",
      provider: "anthropic",
      usage: {
        inputTokens: 3120n,
        outputTokens: 184n,
        cacheReadTokens: 2048n,
        cost: cost("0.0121"),
      },
    }),
    toolResult(
      "c1",
      "export function guard(req) {\n  if (!req.session.user) redirect('/login');\n}",
      {
        id: "d3",
        toolName: "read_file",
      },
    ),
    assistantMessage(
      "The guard also runs on `/login` itself, so an anonymous visitor is sent to `/login` forever. **Fix:** skip the guard for the login route.",
      {
        id: "d4",
        model: "claude-sonnet",
        provider: "anthropic",
        usage: {
          inputTokens: 3410n,
          outputTokens: 96n,
          cacheReadTokens: 3072n,
          cost: cost("0.0094"),
        },
      },
    ),
  ]);
  return (await store.shares.create({ workspace: WS, session: "demo", by: "ana" })).token;
}

const rowOf = (page: Page, id: string) => page.locator(`#tree .row[data-id="${id}"]`);

describe.skipIf(CHROMIUM === undefined)("a share link in Chromium", () => {
  let store: SessionStore;
  let server: RunningServer;
  let browser: Browser;
  let url: string;
  let link: string;
  let demoToken: string;

  const cli = async (...args: string[]) => {
    const res = await runCli([...args, "-w", WS, "--server", url], {
      env: { SESSIOND_TOKEN: TOKEN },
      timeoutMs: 60_000,
    });
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    return res.stdout.trim();
  };

  /** A fresh page (no token in its tab) with its RPCs, dialogs and errors recorded. */
  async function open(at: string) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const rpcs: string[] = [];
    const dialogs: string[] = [];
    const errors: string[] = [];
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith("/sessiond.")) rpcs.push(path);
    });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(at);
    return { page, rpcs, dialogs, errors, close: () => context.close() };
  }

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sessiond-share-view-"));
    store = openStore({ dataDir, now: () => new Date(nowMs) });
    await seed(store);
    demoToken = await seedDemo(store);
    server = await startServer(
      store,
      serverConfig({
        port: 0,
        tokens: [{ token: TOKEN, workspaces: ["*"] }],
        uiDir: await builtUi(),
        heartbeatMs: 1000,
        shutdownGraceMs: 200,
        log: () => {},
      }),
    );
    url = `http://127.0.0.1:${server.port}`;
    link = await cli("share", SESSION, "--by", "ana");
    browser = await launch();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("sessiond share prints the server's URL + /share/<token>", () => {
    expect(link).toMatch(new RegExp(`^${url}/share/[A-Za-z0-9_-]{43}$`));
  });

  it("shows the snapshot without a token: the path root -> leaf, read with ReadShare only", async () => {
    const v = await open(link);
    try {
      await v.page.locator('article.entry[data-entry="a5"]').waitFor();
      expect(await v.page.textContent('article.entry[data-entry="a5"]')).toContain(
        "Done: the tests pass.",
      );
      expect(await v.page.textContent(".session-head h2")).toBe(TITLE);
      expect(await v.page.textContent("#auth")).toContain("read-only");
      expect(await v.page.locator(".token-form").count()).toBe(0);
      expect(await v.page.locator("#live").isVisible()).toBe(false);
      // The abandoned branch is not part of the snapshot: not even folded away.
      expect(await rowOf(v.page, "aa").count()).toBe(0);
      expect(await rowOf(v.page, "ua").count()).toBe(0);
      expect(await v.page.locator("#tree button.fold").count()).toBe(0);
      await rowOf(v.page, "a1").click();
      await v.page.locator('article.entry[data-entry="a1"]').waitFor();
      expect(await v.page.textContent("article.entry")).toContain("src/auth.ts");
      // The workspace's list is not there: the snapshot shows again.
      await v.page.evaluate("location.hash = '#/w/team'");
      await v.page
        .locator('article.entry[data-entry="a2"], article.entry[data-entry="a5"]')
        .first()
        .waitFor();
      expect(await v.page.locator(".session-head h2").textContent()).toBe(TITLE);
      expect(new Set(v.rpcs)).toEqual(new Set(["/sessiond.v1.StoreService/ReadShare"]));
      await rowOf(v.page, "a5").click();
      await v.page.locator('article.entry[data-entry="a5"]').waitFor();
      expect(v.errors).toEqual([]);
    } finally {
      await v.close();
    }
  });

  it("a plain session's link, for the docs' screenshot", async () => {
    const v = await open(`${url}/share/${demoToken}`);
    try {
      await v.page.locator('article.entry[data-entry="d4"]').waitFor();
      await v.page.locator('#usage [data-usage="total"]').waitFor();
      expect(await v.page.textContent('#usage [data-usage="total"]')).toContain("0.0215 USD");
      await v.page.screenshot({ path: screenshotPath("share-link.png") });
    } finally {
      await v.close();
    }
  });

  it("keeps the XSS payloads inert in a share: text, no script, no dialog", async () => {
    const v = await open(link);
    try {
      await rowOf(v.page, "x1").waitFor();
      await rowOf(v.page, "x1").click();
      const md = v.page.locator('article.entry[data-entry="x1"] .md');
      await md.waitFor();
      expect(await md.textContent()).toContain("<script>window.__xss = 'script'</script>");
      expect(await md.locator("script, img[onerror]").count()).toBe(0);
      const hrefs = await md
        .locator("a")
        .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
      for (const href of hrefs) expect(href ?? "").not.toMatch(/^\s*javascript:/i);
      await rowOf(v.page, "t1").click();
      await v.page.locator('article.entry[data-entry="t1"]').waitFor();
      expect(await v.page.textContent("article.entry")).toContain("<h1 id='tool-heading'>");
      expect(await v.page.locator("#tool-heading").count()).toBe(0);
      expect(await v.page.evaluate("window.__xss")).toBeUndefined();
      expect(v.dialogs).toEqual([]);
      expect(v.errors).toEqual([]);
      expect(await v.page.title()).toBe(`${TITLE} · sessiond`);
    } finally {
      await v.close();
    }
  });

  it("leaves out what the share omits: tool output and thinking", async () => {
    const omitted = await cli("share", SESSION, "--omit-tool-output", "--omit-thinking");
    const v = await open(omitted);
    try {
      await rowOf(v.page, "a1").waitFor();
      await rowOf(v.page, "a1").click();
      await v.page.locator('article.entry[data-entry="a1"]').waitFor();
      const a1 = (await v.page.textContent("article.entry")) ?? "";
      expect(a1).toContain("I'll read the file.");
      expect(a1).not.toContain("THINKING: the bug");
      await rowOf(v.page, "t1").click();
      await v.page.locator('article.entry[data-entry="t1"]').waitFor();
      expect(await v.page.textContent("article.entry")).not.toContain("export function login");
    } finally {
      await v.close();
    }
  });

  it("404s at once after sessiond share --revoke, and the list says revoked", async () => {
    const doomed = await cli("share", SESSION, "--entry", "a2");
    const v = await open(doomed);
    try {
      await v.page.locator('article.entry[data-entry="a2"]').waitFor();
      const id = (doomed.split("/share/")[1] as string).slice(0, 12);
      expect(await cli("share", "--revoke", id)).toContain(`revoked ${id}`);
      expect(await cli("share", "--list")).toMatch(
        new RegExp(`${id}\\s+${SESSION}\\s+a2\\s.*revoked`),
      );
      await v.page.reload();
      await v.page.locator("#share-missing").waitFor();
      expect(await v.page.textContent("#share-missing")).toContain("404");
      expect(await v.page.textContent("#share-missing")).toContain("revoked, or has expired");
      expect(await v.page.locator("#tree").count()).toBe(0);
      expect(await v.page.title()).toBe("Share not found · sessiond");
    } finally {
      await v.close();
    }
  });

  it("404s once the server's clock passes the expiry", async () => {
    const short = await cli("share", SESSION, "--expires", "1h");
    const v = await open(short);
    const before = nowMs;
    try {
      await v.page.locator('article.entry[data-entry="a5"]').waitFor();
      nowMs += 2 * 60 * 60 * 1000;
      await v.page.reload();
      await v.page.locator("#share-missing").waitFor();
      expect(await v.page.textContent("#share-missing")).toContain("404");
    } finally {
      nowMs = before;
      await v.close();
    }
    // The first link (7 days) still reads.
    const w = await open(link);
    try {
      await w.page.locator('article.entry[data-entry="a5"]').waitFor();
    } finally {
      await w.close();
    }
  });
});

if (CHROMIUM === undefined) noChromium("a share link in Chromium");
