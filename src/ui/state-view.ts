import { type SessionState, type StateMessage, View } from "../web/index.js";
import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { renderMessage } from "./entry-view.js";
import type { PaneContext } from "./pane-context.js";

/** Messages read and drawn first (the end of the state), and drawn on each "Earlier messages". */
const BATCH = 200;
/** Messages each later GetState page reads (then drawn a BATCH at a time). */
const EARLIER_PAGE = 2000;

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
 * full transcript up to it (HISTORY), from GetState with at_entry_id. It
 * opens where the user is: at the selected entry, which ends the state, so
 * the state is read from its end (from_end): one call brings the last
 * messages, drawn at once however long the path; "Earlier messages" draws
 * the run before, reading GetState's next page backwards when the messages
 * read so far run out, each message linking back to its entry.
 */
export async function renderState(
  ctx: PaneContext,
  entryId: string,
  view: View,
  into: HTMLElement,
): Promise<void> {
  const req = {
    workspace: ctx.workspace,
    session: ctx.session,
    atEntryId: entryId,
    view,
    fromEnd: true,
  };
  const first = await ctx.readFirst(() => api().session.getState({ ...req, pageSize: BATCH }));
  if (first.state === undefined) {
    replace(into, "no state");
    return;
  }
  const s: SessionState = first.state;
  const total = Number(first.messageCount);
  /** The messages read so far: the last `read.length` of the state's `total`. */
  const read: StateMessage[] = [...s.messages];
  let token = first.nextPageToken;
  /** Index in the state of the first message drawn (they are drawn up to its end). */
  let lo = total - read.length;
  const title = view === View.HISTORY ? "History" : "Context";
  const count = h("span", { class: "count" });
  const heading = h("h3", null, `${title} at `, ctx.link(entryId), ": ", count);
  // Each message carries its own number (the items are blocks, not list
  // items): an <ol start> moved by every "Earlier messages" would renumber,
  // and lay out again, every message drawn.
  const item = (m: StateMessage, at: number, later: boolean) =>
    h(
      "li",
      {
        class: `state-message${m.entryId === entryId ? " at" : ""}${later ? " later" : ""}`,
        "data-entry": m.entryId,
      },
      h("div", { class: "from" }, `${at + 1}. from `, ctx.link(m.entryId)),
      m.message === undefined ? "" : renderMessage(m.message),
    );
  const drawn = (from: number, to: number, later: boolean) => {
    const offset = total - read.length;
    return read.slice(from - offset, to - offset).map((m, i) => item(m, from + i, later));
  };
  const list = h("ol", { class: "state-messages" }, ...drawn(lo, total, false));
  const earlier = h("button", { class: "more earlier" }, "Earlier messages");
  const problem = h("div", { class: "state-problem" });
  const update = () => {
    count.textContent =
      lo > 0 ? `${total} messages, ${lo + 1}–${total} shown` : `${total} messages`;
    earlier.hidden = lo === 0;
  };
  const drawEarlier = async () => {
    const base = total - read.length;
    if (lo - base < BATCH && token !== "") {
      const page = await ctx.readFirst(() =>
        api().session.getState({ ...req, pageSize: EARLIER_PAGE, pageToken: token }),
      );
      read.unshift(...(page.state?.messages ?? []));
      token = page.nextPageToken;
    }
    const from = Math.max(total - read.length, lo - BATCH);
    // Drawn above what the user reads: keep that where it is on the screen.
    const scroller = into.closest(".pane-wrap") ?? document.scrollingElement;
    const before = scroller?.scrollHeight ?? 0;
    list.prepend(...drawn(from, lo, true));
    lo = from;
    if (scroller) scroller.scrollTop += scroller.scrollHeight - before;
    update();
  };
  earlier.addEventListener("click", () => {
    earlier.disabled = true;
    replace(problem);
    drawEarlier()
      .catch((err) => ctx.onError(err, problem))
      .finally(() => {
        earlier.disabled = false;
      });
  });
  update();
  replace(into, heading, stateHead(s), earlier, problem, list);
  list.lastElementChild?.scrollIntoView({ block: "end" });
  performance.mark("sessiond:state-shown");
}
