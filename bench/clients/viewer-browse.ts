/**
 * Scenario v: the viewer in headless Chromium (playwright-core, Debian's
 * chromium-headless-shell) on a big session, as a user opens it: the tree's
 * first rows, a click on a row among them, then the context view at the
 * current leaf, both while the rest of the tree is still loading; then, in
 * a new tab, a link to the leaf's entry (near the end of the log), its
 * content against the tree's first rows on that tab. Times are the
 * viewer's own user-timing marks (session-view.ts, detail-pane.ts,
 * state-view.ts), in ms since navigation, so the browser's polling adds
 * nothing to them.
 *
 * {url, sessionId, clickId, leafId, reps}
 * Prints {runs: [{firstRows, entryShown, stateShown, treeComplete, link: {firstRows, entryShown}}]}.
 */
import { existsSync } from "node:fs";
import { chromium, type Page } from "playwright-core";
import { answer, args } from "./data-common.js";

const a = args<{ url: string; sessionId: string; clickId: string; leafId: string; reps: number }>();
const executablePath = [
  "/usr/lib/chromium/chromium-headless-shell",
  "/usr/lib/chromium/chromium",
].find((p) => existsSync(p));
if (executablePath === undefined) throw new Error("no Chromium (scripts/setup.sh installs it)");

const mark = async (page: Page, name: string): Promise<number> => {
  const times = (await page.evaluate(
    `performance.getEntriesByName(${JSON.stringify(name)}).map((e) => e.startTime)`,
  )) as number[];
  const t = times[times.length - 1];
  if (t === undefined) throw new Error(`no ${name} mark`);
  return t;
};

const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] });
const runs = [];
try {
  for (let r = 0; r < a.reps; r++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const base = `${a.url}/ui/#/w/default/s/${a.sessionId}`;
    await page.goto(base);
    const row = page.locator(`#tree .row[data-id="${a.clickId}"]`);
    await row.waitFor({ timeout: 120_000 });
    await row.click();
    await page.locator(`article.entry[data-entry="${a.clickId}"]`).waitFor({ timeout: 120_000 });
    await page.evaluate(
      `location.hash = ${JSON.stringify(`${base.slice(base.indexOf("#"))}/e/${a.leafId}?tab=context`)}`,
    );
    await page
      .locator(`ol.state-messages > li.at[data-entry="${a.leafId}"]`)
      .waitFor({ timeout: 120_000 });
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 120_000 });
    const run = {
      firstRows: await mark(page, "sessiond:first-rows"),
      entryShown: await mark(page, "sessiond:entry-shown"),
      stateShown: await mark(page, "sessiond:state-shown"),
      treeComplete: await mark(page, "sessiond:tree-complete"),
    };
    await page.close();
    const tab = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await tab.goto(`${base}/e/${a.leafId}`);
    await tab.locator(`article.entry[data-entry="${a.leafId}"]`).waitFor({ timeout: 120_000 });
    await tab.locator("#tree .row").first().waitFor({ timeout: 120_000 });
    const link = {
      firstRows: await mark(tab, "sessiond:first-rows"),
      entryShown: await mark(tab, "sessiond:entry-shown"),
    };
    await tab.close();
    runs.push({ ...run, link });
  }
} finally {
  await browser.close();
}
answer({ runs });
