import { View } from "../web/index.js";
import { api, errorText, readBlob } from "./api.js";
import { h, replace } from "./dom.js";
import { releaseImages, renderEntry, useBlobReader } from "./entry-view.js";
import { nodeBadge } from "./node-badge.js";
import type { PaneContext } from "./pane-context.js";
import { diffHash, sessionHash, type Tab } from "./route.js";
import { renderState } from "./state-view.js";
import type { Node } from "./tree-node.js";

export type { PaneContext } from "./pane-context.js";

function diffColumn(ctx: PaneContext, title: string, tip: string, nodes: Node[]): HTMLElement {
  return h(
    "div",
    { class: "diff-col" },
    h("h4", null, title, " ", ctx.link(tip)),
    h("p", { class: "muted" }, `${nodes.length} entries after the fork`),
    h(
      "ol",
      null,
      ...nodes.map((n) =>
        h(
          "li",
          { class: "diff-row", "data-entry": n.id },
          ctx.link(n.id, n.id),
          " ",
          nodeBadge(n),
          " ",
          n.preview,
        ),
      ),
    ),
  );
}

/** The branches ending at `a` and `b`: where they part and what each has after. */
export function renderDiff(ctx: PaneContext, a: string, b: string): HTMLElement {
  const d = ctx.model.diff(a, b);
  if (ctx.model.get(a) === undefined || ctx.model.get(b) === undefined) {
    return h("p", { class: "error" }, "Both entries must be in this session.");
  }
  return h(
    "section",
    { class: "diff" },
    h("h3", null, "Diff of two branches"),
    h(
      "p",
      null,
      "They part after ",
      d.fork === undefined ? "nothing (no common entry)" : ctx.link(d.fork.id),
      ".",
    ),
    h(
      "div",
      { class: "diff-cols" },
      diffColumn(ctx, "A", a, d.onlyA),
      diffColumn(ctx, "B", b, d.onlyB),
    ),
  );
}

/**
 * Picks another branch tip to diff the selected entry's branch against;
 * drawn once the whole tree is loaded (a tip is only known then).
 */
function diffPicker(ctx: PaneContext, entryId: string): HTMLElement {
  const box = h("span", { class: "diff-picker muted" }, "branches loading…");
  ctx.complete.then(
    () => box.replaceWith(diffChoice(ctx, entryId)),
    () => {},
  );
  return box;
}

function diffChoice(ctx: PaneContext, entryId: string): HTMLElement {
  const tips = ctx.model.tips().filter((n) => n.id !== entryId);
  if (tips.length === 0) return h("span", { class: "muted" }, "no other branch to diff with");
  const leaf = ctx.model.leafId;
  const select = h(
    "select",
    { name: "diff-with", "aria-label": "branch to diff with" },
    ...tips
      .slice(-200)
      .map((n) =>
        h(
          "option",
          { value: n.id, selected: n.id === leaf },
          `${n.id} ${n.id === leaf ? "(current leaf) " : ""}${n.preview.slice(0, 40)}`,
        ),
      ),
  );
  const go = h("button", { class: "diff-go" }, "Diff branches");
  go.addEventListener("click", () => {
    location.hash = diffHash(ctx.workspace, ctx.session, entryId, select.value);
  });
  return h("span", { class: "diff-picker" }, select, " ", go);
}

/**
 * The right-hand pane for a selected entry: its details, or the folded state
 * at it in the CONTEXT or HISTORY view, each a deep link.
 */
export function renderPane(ctx: PaneContext, entryId: string, tab: Tab): HTMLElement {
  releaseImages();
  useBlobReader((ref) => readBlob(ctx.workspace, ref.sha256, Number(ref.size)));
  const body = h("div", { class: "pane-body" }, h("p", { class: "muted" }, "Loading…"));
  const tabLink = (t: Tab, label: string) =>
    h(
      "a",
      {
        href: sessionHash(ctx.workspace, ctx.session, entryId, t),
        class: t === tab ? "tab on" : "tab",
        "data-tab": t,
      },
      label,
    );
  const load = async () => {
    if (tab === "entry") {
      // By id: a link shows its entry without waiting for the tree page that holds its row.
      const res = await ctx.readFirst(() =>
        api().session.getEntries({
          workspace: ctx.workspace,
          session: ctx.session,
          entryIds: [entryId],
        }),
      );
      if (!body.isConnected) return;
      const entry = res.entries[0];
      replace(
        body,
        entry === undefined ? "entry not found" : renderEntry(entry, ctx.link, ctx.sessionLink),
      );
      performance.mark("sessiond:entry-shown");
    } else {
      await renderState(ctx, entryId, tab === "history" ? View.HISTORY : View.CONTEXT, body);
    }
  };
  load().catch((err) => ctx.onError(err, body));
  return h(
    "section",
    { class: "pane" },
    h(
      "nav",
      { class: "tabs" },
      tabLink("entry", "Entry"),
      tabLink("context", "Context at entry"),
      tabLink("history", "History at entry"),
      diffPicker(ctx, entryId),
    ),
    body,
  );
}

/** Shown before anything is selected. */
export function emptyPane(): HTMLElement {
  return h(
    "section",
    { class: "pane" },
    h("p", { class: "muted" }, "Select an entry in the tree."),
  );
}

/** A one-line error in the pane. */
export function paneError(err: unknown): HTMLElement {
  return h("p", { class: "error" }, errorText(err));
}
