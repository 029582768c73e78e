import { type SessionState, View } from "../web/index.js";
import { api, errorText, readBlob } from "./api.js";
import { h, replace } from "./dom.js";
import {
  type EntryLink,
  releaseImages,
  renderEntry,
  renderMessage,
  useBlobReader,
} from "./entry-view.js";
import { nodeBadge } from "./node-badge.js";
import { diffHash, sessionHash, type Tab } from "./route.js";
import type { TreeModel } from "./tree-model.js";
import type { Node } from "./tree-node.js";

/** What the pane needs of its session view. */
export interface PaneContext {
  readonly workspace: string;
  readonly session: string;
  readonly model: TreeModel;
  readonly link: EntryLink;
  readonly sessionLink: (id: string) => HTMLElement;
  readonly onError: (err: unknown, into: HTMLElement) => void;
}

/** State messages drawn at once; a longer state draws more on request. */
const STATE_BATCH = 200;

function stateHead(s: SessionState): HTMLElement {
  const pairs: [string, string | undefined][] = [
    ["model", s.model === undefined ? undefined : `${s.provider ?? ""} ${s.model}`],
    ["thinking", s.thinkingLevel],
    ["label", s.label],
    ["compaction floor", s.compactionFloorId],
    ["folded at", s.leafId],
    ["current leaf", s.currentLeafId],
    ["head seq", String(s.headSeq)],
  ];
  return h(
    "dl",
    { class: "state-head" },
    ...pairs
      .filter(([, v]) => v !== undefined)
      .flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)]),
  );
}

/**
 * The state the LLM gets at an entry (CONTEXT: compactions folded in) or the
 * full transcript up to it (HISTORY), from GetState with at_entry_id. The
 * first page is drawn at once, the others are read after it (a long
 * session's state is megabytes); messages are drawn a batch at a time, each
 * linking back to the entry it came from.
 */
async function renderState(
  ctx: PaneContext,
  entryId: string,
  view: View,
  into: HTMLElement,
): Promise<void> {
  const req = { workspace: ctx.workspace, session: ctx.session, atEntryId: entryId, view };
  const first = await api().session.getState(req);
  if (first.state === undefined) {
    replace(into, "no state");
    return;
  }
  const s: SessionState = first.state;
  const list = h("ol", { class: "state-messages" });
  const count = h("span", { class: "count" });
  let shown = 0;
  let token = first.nextPageToken;
  const more = h("button", { class: "more" }, "More messages");
  const update = () => {
    count.textContent = `${s.messages.length}${token === "" ? "" : "+"} messages`;
    more.hidden = shown >= s.messages.length;
  };
  const drawMore = () => {
    for (const m of s.messages.slice(shown, shown + STATE_BATCH)) {
      list.append(
        h(
          "li",
          { class: "state-message", "data-entry": m.entryId },
          h("div", { class: "from" }, "from ", ctx.link(m.entryId)),
          m.message === undefined ? "" : renderMessage(m.message),
        ),
      );
    }
    shown = Math.min(s.messages.length, shown + STATE_BATCH);
    update();
  };
  more.addEventListener("click", drawMore);
  drawMore();
  const title = view === View.HISTORY ? "History" : "Context";
  replace(
    into,
    h("h3", null, `${title} at `, ctx.link(entryId), ": ", count),
    stateHead(s),
    list,
    more,
  );
  // The rest, while the pane is still on the page.
  while (token !== "" && into.isConnected) {
    const page = await api().session.getState({ ...req, pageToken: token });
    for (const m of page.state?.messages ?? []) s.messages.push(m);
    token = page.nextPageToken;
    update();
  }
}

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

/** Picks another branch tip to diff the selected entry's branch against. */
function diffPicker(ctx: PaneContext, entryId: string): HTMLElement {
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
  const node = ctx.model.get(entryId);
  const load = async () => {
    if (tab === "entry") {
      if (node === undefined) throw new Error(`entry ${entryId} is not in this session`);
      const res = await api().session.getEntries({
        workspace: ctx.workspace,
        session: ctx.session,
        afterSeq: BigInt(node.seq - 1),
        limit: 1,
      });
      const entry = res.entries[0];
      replace(
        body,
        entry === undefined ? "entry not found" : renderEntry(entry, ctx.link, ctx.sessionLink),
      );
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
