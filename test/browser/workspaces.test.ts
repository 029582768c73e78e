import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import { CHROMIUM, launch, noChromium, tempDataDir, ViewerServer } from "./viewer-harness.js";

/**
 * The viewer's start page lists the workspaces (ListWorkspaces): by name,
 * with their counts of sessions and subagent sessions, each linking to its
 * sessions; a workspace's list links back to them; with a token that may
 * use some workspaces only, those only.
 */

const TOKEN_ALL = "every-workspace-token-0123456789";
const TOKEN_BETA = "beta-only-token-0123456789abcdef";

async function seed(dataDir: string): Promise<void> {
  const store = openStore({ dataDir });
  try {
    await store.create({ workspace: "alpha", sessionId: "a-one", title: "first of alpha" });
    await store.create({ workspace: "alpha", sessionId: "a-two", title: "second of alpha" });
    await store.create({
      workspace: "alpha",
      sessionId: "a-helper",
      parentSessionId: "a-one",
      agentType: "helper",
    });
    await store.create({ workspace: "beta", sessionId: "b-one", title: "only of beta" });
  } finally {
    await store.close();
  }
}

describe.skipIf(CHROMIUM === undefined)("the workspaces of the viewer, in Chromium", () => {
  let browser: Browser;
  let server: ViewerServer;

  beforeAll(async () => {
    const dataDir = tempDataDir();
    await seed(dataDir);
    server = new ViewerServer(dataDir, [
      { token: TOKEN_ALL, workspaces: ["*"] },
      { token: TOKEN_BETA, workspaces: ["beta"] },
    ]);
    await server.start();
    browser = await launch();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A new tab at `hash` holding `token` (entered in the token form). */
  async function openWith(token: string, hash: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.goto(`${server.url}/ui/${hash}`);
    await page.locator(".token-form").waitFor();
    await page.fill('input[name="token"]', token);
    await page.click('.token-form button[type="submit"]');
    return page;
  }

  const rowsOf = (page: Page) =>
    page
      .locator("tr.workspace-row")
      .evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );

  it("the start page lists the workspaces with their counts, each linking to its sessions", async () => {
    const page = await openWith(TOKEN_ALL, "");
    await page.locator("tr.workspace-row").first().waitFor();
    expect(await rowsOf(page)).toEqual([
      ["alpha", "2", "1"],
      ["beta", "1", "0"],
    ]);
    await page.click('tr.workspace-row[data-workspace="alpha"] a');
    await page.locator('tr.session-row[data-session="a-two"]').waitFor();
    expect(new URL(page.url()).hash).toBe("#/w/alpha");
    expect(await page.locator("tr.session-row").count()).toBe(2);
    await page.close();
  });

  it("a workspace's list links back to every workspace", async () => {
    const page = await openWith(TOKEN_ALL, "#/w/beta");
    await page.locator('tr.session-row[data-session="b-one"]').waitFor();
    await page.click("a.all-workspaces");
    await page.locator('tr.workspace-row[data-workspace="alpha"]').waitFor();
    expect(await page.locator("tr.workspace-row").count()).toBe(2);
    await page.close();
  });

  it("with a token for one workspace, lists that one only", async () => {
    const page = await openWith(TOKEN_BETA, "#/");
    await page.locator("tr.workspace-row").first().waitFor();
    expect(await rowsOf(page)).toEqual([["beta", "1", "0"]]);
    await page.close();
  });
});

if (CHROMIUM === undefined) noChromium("the workspaces of the viewer, in Chromium");
