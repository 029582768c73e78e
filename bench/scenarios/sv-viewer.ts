/**
 * Scenario v: the web viewer in headless Chromium on a 100,000-entry session
 * with 20 branches (issue 37, item 9), served by `sessiond serve` (its
 * built viewer at /ui/), both rows from the same page loads and measured
 * against the first GetTree page's arrival (the viewer's first rows):
 *
 * v/click: a click on a row among the first rows, until its entry is shown
 *   in the pane, while the rest of the tree is still loading. Target: the
 *   issue's 300 ms.
 * v/context: then the context view at the current leaf (read from the end
 *   of the path: its last messages in one GetState call), until it is drawn
 *   opened at that entry; against the rest of the tree's load on the same
 *   page. Target <= 1.5 ×.
 * v/link: in a new tab, a link to the leaf's entry (the end of the log, the
 *   tree's last page), until its content is shown, in ms since navigation;
 *   against the tree's first rows on that tab (the first GetTree page's
 *   arrival), which it no longer waits for the last page after. Target
 *   <= 1.5 ×.
 *
 * The first load is cold (the server reads the session for it); the figures
 * are medians of the warm loads after it, the cold one is in the details.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext, Scenario } from "../lib/context.js";
import { runClient, startSessiond } from "../lib/procs.js";
import { absoluteAtMost, atMost, type Row } from "../lib/row.js";
import { median } from "../lib/stats.js";

interface Run {
  firstRows: number;
  entryShown: number;
  stateShown: number;
  treeComplete: number;
  /** The tab opened at a link to the leaf's entry. */
  link: { firstRows: number; entryShown: number };
}

export const viewer: Scenario = {
  id: "v",
  title: "the web viewer in Chromium on a 100,000-entry session with 20 branches",
  async run(ctx: BenchContext): Promise<Row[]> {
    const dataDir = join(ctx.tmpDir, "sv-data");
    mkdirSync(dataDir, { recursive: true });
    const entries = ctx.quick ? 20_000 : 100_000;
    const sessionId = "viewer-bench";
    const written = await runClient<{ leafId: string; entries: number }>(
      "clients/viewer-write.ts",
      { dataDir, sessionId, entries, branches: 20, branchLength: 200 },
    );
    ctx.log(`wrote ${written.entries} entries, leaf ${written.leafId}`);
    const server = await startSessiond(["--data-dir", dataDir]);
    let runs: Run[];
    try {
      ({ runs } = await runClient<{ runs: Run[] }>("clients/viewer-browse.ts", {
        url: server.url,
        sessionId,
        clickId: "m20",
        leafId: written.leafId,
        reps: ctx.quick ? 2 : 6,
      }));
    } finally {
      await server.stop();
    }
    const [cold, ...warm] = runs;
    const click = warm.map((r) => r.entryShown - r.firstRows);
    const context = warm.map((r) => r.stateShown - r.firstRows);
    const tree = warm.map((r) => r.treeComplete - r.firstRows);
    const linkShown = warm.map((r) => r.link.entryShown);
    const linkRows = warm.map((r) => r.link.firstRows);
    ctx.log(
      `viewer: click ${click.map(Math.round).join(", ")} ms, context ${context.map(Math.round).join(", ")} ms, rest of tree ${tree.map(Math.round).join(", ")} ms after the first rows; link to the leaf: entry at ${linkShown.map(Math.round).join(", ")} ms, first rows at ${linkRows.map(Math.round).join(", ")} ms`,
    );
    const details = { entries: written.entries, cold, warm };
    return [
      absoluteAtMost(
        {
          id: "v/click",
          scenario: `click on a row → its entry shown, from the first rows (${written.entries} entries, tree still loading)`,
          unit: "ms",
          sessiond: median(click),
          details,
        },
        300,
      ),
      atMost(
        {
          id: "v/context",
          scenario: "context view at the leaf → opened at it, from the first rows",
          unit: "ms",
          sessiond: median(context),
          baseline: median(tree),
          baselineName: "the rest of the tree's load, same page",
        },
        1.5,
      ),
      atMost(
        {
          id: "v/link",
          scenario:
            "link to the leaf's entry (the log's end) → its content shown, ms since navigation",
          unit: "ms",
          sessiond: median(linkShown),
          baseline: median(linkRows),
          baselineName: "the tree's first rows, same tab",
          details: { treeCompleteOnFirstTab: median(warm.map((r) => r.treeComplete)) },
        },
        1.5,
      ),
    ];
  },
};
