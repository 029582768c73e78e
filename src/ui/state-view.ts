import { type SessionState, type StateMessage, View } from "../web/index.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { renderMessage } from "./entry-view.js";
import type { PaneContext } from "./pane-context.js";

/** Messages drawn at once; the window grows by as many on request. */
const BATCH = 200;

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

/** Where the window opens: the entry's own message, else the last one before it. */
function anchorOf(messages: readonly StateMessage[], entryId: string): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.entryId === entryId) return i;
  return messages.length - 1;
}

/**
 * The state the LLM gets at an entry (CONTEXT: compactions folded in) or the
 * full transcript up to it (HISTORY), from GetState with at_entry_id. It
 * opens where the user is: at the selected entry, which ends the state, so
 * every page is read first (GetState pages only go forward) and the window
 * of messages that ends at the entry is drawn; earlier messages are drawn a
 * batch at a time on request, each linking back to its entry.
 */
export async function renderState(
  ctx: PaneContext,
  entryId: string,
  view: View,
  into: HTMLElement,
): Promise<void> {
  const req = { workspace: ctx.workspace, session: ctx.session, atEntryId: entryId, view };
  const first = await ctx.readFirst(() => api().session.getState(req));
  if (first.state === undefined) {
    replace(into, "no state");
    return;
  }
  const s: SessionState = first.state;
  const title = view === View.HISTORY ? "History" : "Context";
  const count = h("span", { class: "count" });
  const heading = h("h3", null, `${title} at `, ctx.link(entryId), ": ", count);
  let token = first.nextPageToken;
  if (token !== "") replace(into, heading, h("p", { class: "muted" }, "Reading the messages…"));
  while (token !== "") {
    if (!into.isConnected) return;
    count.textContent = `${s.messages.length}+ messages`;
    const page = await ctx.readFirst(() => api().session.getState({ ...req, pageToken: token }));
    for (const m of page.state?.messages ?? []) s.messages.push(m);
    token = page.nextPageToken;
  }
  const messages = s.messages;
  const at = anchorOf(messages, entryId);
  const hi = at + 1;
  let lo = Math.max(0, hi - BATCH);
  const item = (m: StateMessage) =>
    h(
      "li",
      {
        class: m.entryId === entryId ? "state-message at" : "state-message",
        "data-entry": m.entryId,
      },
      h("div", { class: "from" }, "from ", ctx.link(m.entryId)),
      m.message === undefined ? "" : renderMessage(m.message),
    );
  const list = h("ol", { class: "state-messages" }, ...messages.slice(lo, hi).map(item));
  const earlier = h("button", { class: "more earlier" }, "Earlier messages");
  const update = () => {
    list.start = lo + 1;
    count.textContent =
      messages.length > hi - lo
        ? `${messages.length} messages, ${lo + 1}–${hi} shown`
        : `${messages.length} messages`;
    earlier.hidden = lo === 0;
  };
  earlier.addEventListener("click", () => {
    // Drawn above what the user reads: keep that where it is on the screen.
    const scroller = into.closest(".pane-wrap") ?? document.scrollingElement;
    const before = scroller?.scrollHeight ?? 0;
    const from = Math.max(0, lo - BATCH);
    list.prepend(...messages.slice(from, lo).map(item));
    lo = from;
    if (scroller) scroller.scrollTop += scroller.scrollHeight - before;
    update();
  });
  update();
  replace(into, heading, stateHead(s), earlier, list);
  list.lastElementChild?.scrollIntoView({ block: "end" });
  performance.mark("sessiond:state-shown");
}
