import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSessiondClient } from "../../src/client/index.js";
import {
  assistantMessage,
  labelEntry,
  toolResult,
  userMessage,
} from "../../src/core/entry-builders.js";
import { openStore } from "../../src/index.js";
import {
  CHROMIUM,
  launch,
  noChromium,
  screenshotPath,
  sessiondCommand,
  tempDataDir,
  ViewerServer,
} from "./viewer-harness.js";

/**
 * (Page code runs through page.evaluate or locators: the viewer's CSP
 * forbids eval, which waitForFunction with a string needs.)
 *
 * The web viewer in a real headless Chromium against a real server: list,
 * filter and search; a session's tree (active path, folded branch, labels,
 * compaction and branch summary, subagent link); an entry's details; the
 * state at an entry in both views; the diff of two branches; live follow of
 * appends made by another process, across a server restart; hostile message
 * text rendered inert; the token entered once and kept out of the URL.
 */
const WS = "team";
const TOKEN = "viewer-test-token";
const XSS_TEXT = [
  "<script>window.__xss = 'script'</script>",
  '<img src="x" onerror="window.__xss = \'img\'">',
  "[click me](javascript:window.__xss='link') and [also](JAVASCRIPT:alert(1))",
].join("\n\n");

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({
      workspace: WS,
      sessionId: "older-session",
      title: "Older session",
      tags: { team: "a" },
    });
    await (await store.open(WS, "older-session")).append([userMessage("an older question")]);
    await store.create({
      workspace: WS,
      sessionId: "demo-session",
      title: "Fix the login bug",
      tags: { team: "b" },
    });
    const s = await store.open(WS, "demo-session");
    await s.append([
      userMessage("Fix the login bug", { id: "u1" }),
      assistantMessage("I'll read the file.", {
        id: "a1",
        thinking: "The bug is probably in auth.ts",
        toolCalls: [{ id: "call1", name: "read_file", args: { path: "src/auth.ts" } }],
        model: "claude-test",
        provider: "anthropic",
        usage: { inputTokens: 1200n, outputTokens: 80n },
        stopReason: "tool_use",
      }),
      toolResult("call1", "export function login(t) { return t !== token }", {
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
      {
        id: "bs1",
        kind: {
          case: "branchSummary",
          value: { summary: "Approach A was abandoned: it broke sessions.", fromId: "aa" },
        },
      },
      userMessage("Try approach B", { id: "ub" }),
      assistantMessage("Approach B: rewrite the check.", { id: "ab" }),
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
    await store.create({
      workspace: WS,
      sessionId: "demo-sub",
      title: "Read auth code",
      parentSessionId: "demo-session",
      agentType: "explorer",
    });
    await (await store.open(WS, "demo-sub")).append([userMessage("read src/auth.ts")]);
    await store.create({ workspace: WS, sessionId: "xss-session", title: "Hostile <b>text</b>" });
    await (await store.open(WS, "xss-session")).append([
      userMessage(XSS_TEXT, { id: "x1" }),
      assistantMessage(XSS_TEXT, { id: "x2" }),
    ]);
    await store.create({
      workspace: "other",
      sessionId: "secret-session",
      title: "Not for this token",
    });
  } finally {
    await store.close();
  }
}

const rowOf = (page: Page, id: string) => page.locator(`#tree .row[data-id="${id}"]`);

describe.skipIf(CHROMIUM === undefined)("the web viewer in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;
  const dialogs: string[] = [];

  beforeAll(async () => {
    const dataDir = tempDataDir();
    await seed(dataDir);
    server = new ViewerServer(dataDir, [{ token: TOKEN, workspaces: [WS] }]);
    await server.start();
    browser = await launch();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("asks for the token once, keeps it in sessionStorage only, then lists the workspace newest first", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator(".token-form").waitFor();
    await page.fill('input[name="token"]', TOKEN);
    await page.click('.token-form button[type="submit"]');
    await page.locator("tr.session-row").first().waitFor();
    const ids = await page
      .locator("tr.session-row")
      .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-session")));
    // Top-level sessions only (the subagent is under its parent), newest first:
    // the order ListSessions gives (creation times a millisecond apart may tie).
    expect([...ids].sort()).toEqual(["demo-session", "older-session", "xss-session"]);
    const client = createSessiondClient({ baseUrl: server.url, token: TOKEN });
    const listed = await client.store.listSessions({ workspace: WS });
    expect(ids).toEqual(listed.sessions.map((s) => s.id));
    const created = listed.sessions.map(
      (s) => Number(s.createdAt?.seconds) * 1e3 + (s.createdAt?.nanos ?? 0) / 1e6,
    );
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate("sessionStorage.getItem('sessiond.token')")).toBe(TOKEN);
    expect(await page.evaluate("localStorage.length")).toBe(0);
    // A reload keeps the token: no second prompt.
    await page.reload();
    await page.locator("tr.session-row").first().waitFor();
    expect(await page.locator(".token-form").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("sessions.png") });
  });

  it("a workspace the token may not use shows the refusal, not its sessions", async () => {
    await page.goto(`${server.url}/ui/#/w/other`);
    await page.locator(".token-form, .status .error").first().waitFor();
    expect(await page.textContent("#app")).toMatch(/PermissionDenied|Unauthenticated|NotFound/);
    expect(await page.locator("tr.session-row").count()).toBe(0);
  });

  it("filters by title and tag, and searches message text", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.fill('input[name="title"]', "login");
    await page.click('form.filters button[type="submit"]');
    await expect.poll(() => page.locator("tr.session-row").count()).toBe(1);
    expect(await page.getAttribute("tr.session-row", "data-session")).toBe("demo-session");
    expect(page.url()).toContain("title=login");

    await page.goto(`${server.url}/ui/#/w/${WS}?tag=team%3Da`);
    await page.locator('tr.session-row[data-session="older-session"]').waitFor();
    await expect.poll(() => page.locator("tr.session-row").count()).toBe(1);
    expect(await page.locator("tr.session-row").count()).toBe(1);

    await page.goto(`${server.url}/ui/#/w/${WS}?q=inverted`);
    await page.locator("li.hit").first().waitFor();
    const hits = await page
      .locator("li.hit a")
      .evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(hits).toContain(`#/w/${WS}/s/demo-session/e/a2`);
  });

  it("tells the list that sessions changed since it was drawn, and draws it again on request", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator("tr.session-row").first().waitFor();
    const made = await sessiondCommand(
      server.url,
      ["new", "--title", "Made elsewhere", "--id", "made-elsewhere", "-w", WS],
      TOKEN,
    );
    expect(made.stderr).toBe("");
    await page.locator(".changes", { hasText: "1 session changed" }).waitFor({ timeout: 10_000 });
    expect(await page.locator('tr[data-session="made-elsewhere"]').count()).toBe(0);
    await page.click(".changes button");
    await page.locator('tr[data-session="made-elsewhere"]').waitFor();
  });

  it("opens a session as a tree: active path, folded branch, labels, compaction, branch summary, subagent", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.click('tr.session-row[data-session="demo-session"] a');
    await rowOf(page, "a5").waitFor();
    expect(page.url()).toContain(`#/w/${WS}/s/demo-session`);
    // The active path is highlighted and ends at the leaf.
    expect(await rowOf(page, "a5").getAttribute("class")).toContain("on-path");
    expect(await rowOf(page, "a5").textContent()).toContain("leaf");
    expect(await rowOf(page, "c1").textContent()).toContain("compaction");
    expect(await rowOf(page, "bs1").textContent()).toContain("branch summary");
    // The abandoned branch (label, then A) is folded, off the path.
    expect(await rowOf(page, "l1").getAttribute("class")).not.toContain("on-path");
    expect(await rowOf(page, "l1").textContent()).toContain("before-fix");
    expect(await rowOf(page, "aa").count()).toBe(0);
    await rowOf(page, "l1").locator("button.fold").click();
    await rowOf(page, "aa").waitFor();
    expect(await rowOf(page, "aa").getAttribute("class")).not.toContain("on-path");
    // The subagent session is linked.
    const sub = page.locator("a.subagent");
    await sub.waitFor();
    expect(await sub.textContent()).toContain("explorer");
    expect(await sub.getAttribute("href")).toBe(`#/w/${WS}/s/demo-sub`);
    await page.screenshot({ path: screenshotPath("session-tree.png") });
    // ... and leads to the subagent, which links back to its parent.
    await sub.click();
    await page.locator(".session-head", { hasText: "subagent of demo-session" }).waitFor();
    expect(await page.getAttribute('.session-head a[href$="/s/demo-session"]', "href")).toBe(
      `#/w/${WS}/s/demo-session`,
    );
    await page.goBack();
    await page.locator(".session-head", { hasText: "Fix the login bug" }).waitFor();
    await rowOf(page, "a5").waitFor();
  });

  it("clicking through the tree shows each entry: tool call, thinking, usage, tool result, deep link", async () => {
    await rowOf(page, "a1").click();
    await page.locator('article.entry[data-entry="a1"]').waitFor();
    expect(page.url()).toContain(`#/w/${WS}/s/demo-session/e/a1`);
    const a1 = await page.textContent("article.entry");
    expect(a1).toContain("read_file");
    expect(a1).toContain("src/auth.ts");
    expect(a1).toContain("thinking");
    expect(a1).toContain("in 1200 · out 80");
    expect(a1).toContain("claude-test");
    await page.click("article.entry details.thinking summary");
    await page.screenshot({ path: screenshotPath("entry.png") });
    await rowOf(page, "t1").click();
    await page.locator('article.entry[data-entry="t1"]').waitFor();
    expect(await page.textContent("article.entry")).toContain("answers call1");
    // Keyboard: down moves to the next row.
    await page.focus("#tree");
    await page.keyboard.press("ArrowDown");
    await page.locator('article.entry[data-entry="a2"]').waitFor();
    // The markdown is rendered (bold), as sanitised HTML.
    expect(await page.locator("article.entry .md strong").textContent()).toBe("token check");
    // A deep link straight to an entry opens the session with it selected.
    await page.goto(`${server.url}/ui/#/w/${WS}/s/demo-session/e/bs1`);
    await page.reload();
    await page.locator('article.entry[data-entry="bs1"]').waitFor();
    expect(await rowOf(page, "bs1").getAttribute("class")).toContain("selected");
    expect(await page.textContent("article.entry")).toContain("Approach A was abandoned");
  });

  it("shows the state at an entry in the CONTEXT and HISTORY views", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/demo-session/e/a5?tab=context`);
    await page.locator("ol.state-messages li").first().waitFor();
    const context = await page
      .locator("ol.state-messages > li")
      .evaluateAll((li) => li.map((l) => l.getAttribute("data-entry")));
    // The compaction stands for u1, a1, t1; the abandoned branch is not on the path.
    expect(context[0]).toBe("c1");
    expect(context).not.toContain("u1");
    expect(context).not.toContain("aa");
    expect(await page.textContent("ol.state-messages")).toContain("login bug found in auth.ts");
    await page.screenshot({ path: screenshotPath("state-context.png") });

    await page.click('a[data-tab="history"]');
    await expect.poll(() => page.url()).toContain("tab=history");
    await page.locator('ol.state-messages > li[data-entry="u1"]').waitFor();
    const history = await page
      .locator("ol.state-messages > li")
      .evaluateAll((li) => li.map((l) => l.getAttribute("data-entry")));
    expect(history).toEqual(expect.arrayContaining(["u1", "a1", "t1", "a2", "ub", "ab", "a5"]));
    expect(history).not.toContain("aa");

    // The state at an entry of the abandoned branch is that branch's.
    await page.goto(`${server.url}/ui/#/w/${WS}/s/demo-session/e/aa?tab=history`);
    await page.locator("h3", { hasText: "History at aa" }).waitFor();
    const atA = await page
      .locator("ol.state-messages > li")
      .evaluateAll((li) => li.map((l) => l.getAttribute("data-entry")));
    expect(atA).toEqual(["u1", "a1", "t1", "a2", "ua", "aa"]);
  });

  it("diffs two branches from where they part", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/demo-session/e/aa`);
    await page.locator('select[name="diff-with"]').waitFor();
    await page.selectOption('select[name="diff-with"]', "a5");
    await page.click("button.diff-go");
    await page.locator("section.diff").waitFor();
    expect(page.url()).toContain(`/s/demo-session/diff/aa/a5`);
    expect(await page.textContent("section.diff > p")).toContain("a2");
    const cols = await page
      .locator(".diff-col")
      .evaluateAll((cs) =>
        cs.map((c) =>
          [...c.querySelectorAll("li.diff-row")].map((li) => li.getAttribute("data-entry")),
        ),
      );
    expect(cols).toEqual([
      ["l1", "ua", "aa"],
      ["bs1", "ub", "ab", "c1", "a5"],
    ]);
    await page.screenshot({ path: screenshotPath("diff.png") });
  });

  it("follows a live session while another process appends, also across a server restart", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/demo-session`);
    await page.waitForSelector('#live[data-state="live"]');
    // The page notes when the row appears (a MutationObserver, the page's own clock).
    await page.evaluate(`new MutationObserver((_, obs) => {
      if (document.querySelector('#tree .row[data-id="live1"]')) { window.__shownAt = Date.now(); obs.disconnect(); }
    }).observe(document.getElementById("tree"), { childList: true, subtree: true })`);
    const appended = await sessiondCommand(
      server.url,
      [
        "append",
        "demo-session",
        "a message from another process",
        "-w",
        WS,
        "--id",
        "live1",
        "--json",
      ],
      TOKEN,
    );
    expect(appended.stderr).toBe("");
    await rowOf(page, "live1").waitFor({ timeout: 10_000 });
    // From the server's timestamp on the entry (when it took the append) to the row on the page.
    const stamped = Date.parse(JSON.parse(appended.stdout).entries[0].timestamp);
    const shownAt = (await page.evaluate("window.__shownAt")) as number;
    console.log(
      `live follow: the entry was on the page ${shownAt - stamped} ms after the server took the append`,
    );
    expect(await rowOf(page, "live1").textContent()).toContain("a message from another process");
    expect(await rowOf(page, "live1").textContent()).toContain("leaf");

    await server.stop();
    await page.waitForSelector('#live[data-state="reconnecting"]', { timeout: 15_000 });
    await server.start();
    const again = await sessiondCommand(
      server.url,
      ["append", "demo-session", "appended after the restart", "-w", WS, "--id", "live2"],
      TOKEN,
    );
    expect(again.stderr).toBe("");
    await rowOf(page, "live2").waitFor({ timeout: 15_000 });
    await page.waitForSelector('#live[data-state="live"]');
    // Nothing missed, nothing twice.
    expect(await page.getAttribute("#tree", "data-count")).toBe("16");
  });

  it("renders <script>, <img onerror> and javascript: links in messages inert", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/xss-session/e/x1`);
    await page.locator('article.entry[data-entry="x1"]').waitFor();
    // The text of the preview is shown as text.
    expect(await rowOf(page, "x1").textContent()).toContain("<script>");
    const md = page.locator("article.entry .md");
    expect(await md.locator("script").count()).toBe(0);
    expect(await md.locator("img[onerror]").count()).toBe(0);
    const hrefs = await md.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
    expect(hrefs.length).toBeGreaterThan(0);
    for (const href of hrefs) expect(href ?? "").not.toMatch(/^\s*javascript:/i);
    await md.locator("a").first().click();
    await page.click(`#tree .row[data-id="x2"]`);
    await page.locator('article.entry[data-entry="x2"]').waitFor();
    await page.goto(`${server.url}/ui/#/w/${WS}/s/xss-session/e/x2?tab=history`);
    await page.locator("ol.state-messages li").first().waitFor();
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator("tr.session-row").first().waitFor();
    expect(await page.textContent('tr[data-session="xss-session"]')).toContain(
      "Hostile <b>text</b>",
    );
    expect(await page.evaluate("window.__xss")).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(await page.locator("#app script").count()).toBe(0);
  });

  it("forgets the token on request: the next call asks for one again", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}`);
    await page.locator("tr.session-row").first().waitFor();
    await page.click("#auth button.link");
    await page.locator(".token-form").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
  });

  it("serves the viewer with a strict CSP, content types and caching, and keeps /ui/ away from Connect", async () => {
    const index = await fetch(`${server.url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    const html = await index.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script [^>]*>[^<]/);
    const script = /src="([^"]+\.js)"/.exec(html)?.[1] as string;
    const js = await fetch(`${server.url}/ui/${script}`);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("immutable");
    const etag = index.headers.get("etag") as string;
    expect((await fetch(`${server.url}/ui/`, { headers: { "if-none-match": etag } })).status).toBe(
      304,
    );
    expect((await fetch(`${server.url}/ui/nope.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/ui/../package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/ui/`, { method: "POST" })).status).toBe(405);
    const redirect = await fetch(`${server.url}/ui`, { redirect: "manual" });
    expect(redirect.status).toBe(308);
  });
});

if (CHROMIUM === undefined) noChromium("the web viewer in Chromium");
