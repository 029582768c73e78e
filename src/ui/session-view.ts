import { watchEntriesResumable } from "../web/index.js";
import { api, errorText } from "./api.js";
import { columnSplitter } from "./column-splitter.js";
import { emptyPane, type PaneContext, paneError, renderDiff, renderPane } from "./detail-pane.js";
import { h, replace } from "./dom.js";
import { LangGraphRows } from "./langgraph-rows.js";
import { ReadPriority } from "./read-priority.js";
import { type Route, sessionHash } from "./route.js";
import { SessionCounts } from "./session-counts.js";
import { sessionHeader } from "./session-header.js";
import { type Row, TreeModel } from "./tree-model.js";
import { nodeOfEntry, nodeOfTree } from "./tree-node.js";
import { treeRow } from "./tree-row.js";
import { VirtualList } from "./virtual-list.js";

const ROW_HEIGHT = 24;
/** The first GetTree page is small so the tree shows at once. */
const FIRST_PAGE = 1000;
/**
 * The later pages are small enough that a click waits for at most one of
 * them (on the server and in the page's main thread) before its own read.
 */
const NEXT_PAGE = 2000;

type SessionRoute = Extract<Route, { view: "session" }>;

/**
 * One session: its header (metadata, parent and subagent sessions), the tree
 * (virtualised rows, active path highlighted, branches off it folded), the
 * pane of the selected entry, and a live follow of new entries over
 * WatchEntries that resumes after a disconnect or a server restart.
 */
export class SessionView {
  readonly element: HTMLElement;
  private readonly model = new TreeModel();
  /** A number for each node object drawn (rowKey): a changed node is a new object. */
  private readonly nodeSerials = new WeakMap<Row["node"], number>();
  private nodeSerial = 0;
  private rows: readonly Row[] = [];
  private readonly list: VirtualList;
  private readonly header = h("header", { class: "session-head" }, "Loading…");
  private readonly counts = new SessionCounts();
  private readonly status = h("span", { id: "tree-status", class: "muted" });
  private readonly live = h(
    "span",
    { id: "live", class: "live", "data-state": "off" },
    "not following",
  );
  private readonly follow = h("input", { type: "checkbox", id: "follow", checked: true });
  private readonly pane = h("div", { class: "pane-wrap" }, emptyPane());
  private readonly stop = new AbortController();
  private readonly priority = new ReadPriority();
  private route: SessionRoute;
  private selected: string | undefined;
  private refreshQueued = false;
  private loaded = false;
  /** Resolves `complete` when the whole tree is loaded. */
  private markComplete: () => void = () => {};
  private readonly complete = new Promise<void>((done) => {
    this.markComplete = done;
  });
  /** A selected entry whose row has not arrived yet: revealed when it does. */
  private toReveal: string | undefined;
  /** LangGraph checkpoints and writes among the rows drawn, read by id for their labels. */
  private readonly langGraph: LangGraphRows;

  constructor(
    route: SessionRoute,
    private readonly onAuth: (err: unknown) => boolean,
  ) {
    this.route = route;
    this.langGraph = new LangGraphRows(
      async (entryIds) => {
        const { workspace, session } = this.route;
        const res = await api().session.getEntries({ workspace, session, entryIds });
        return res.entries;
      },
      () => {
        if (!this.stop.signal.aborted) this.list.draw();
      },
    );
    this.list = new VirtualList(
      ROW_HEIGHT,
      (i) => this.renderRow(i),
      "session tree",
      (i) => this.rowKey(i),
    );
    this.list.element.id = "tree";
    const treeColumn = h(
      "div",
      { class: "tree-wrap" },
      h(
        "div",
        { class: "tree-bar" },
        this.status,
        " ",
        this.live,
        " ",
        h("label", null, this.follow, " follow"),
      ),
      this.list.element,
    );
    const body = h("div", { class: "session-body" }, treeColumn);
    body.append(columnSplitter(body, treeColumn), this.pane);
    this.element = h("section", { class: "session" }, this.header, body);
    this.list.element.tabIndex = 0;
    this.list.element.addEventListener("keydown", (ev) => this.onKey(ev));
    this.selectOnRelease();
    // User-timing marks (devtools' Performance panel, the browser tests): how long a session takes to show.
    performance.mark("sessiond:session-open");
    void this.load();
  }

  /** Whether this view shows `route`'s session (then `show` is enough). */
  shows(route: SessionRoute): boolean {
    return route.workspace === this.route.workspace && route.session === this.route.session;
  }

  /** Ends the live follow. */
  dispose(): void {
    this.stop.abort();
  }

  private get ctx(): PaneContext {
    return {
      workspace: this.route.workspace,
      session: this.route.session,
      model: this.model,
      link: (id, label) =>
        h(
          "a",
          { href: sessionHash(this.route.workspace, this.route.session, id), class: "entry-link" },
          label ?? id,
        ),
      sessionLink: (id) => h("a", { href: sessionHash(this.route.workspace, id) }, id),
      onError: (err, into) => {
        if (!this.onAuth(err)) replace(into, paneError(err));
      },
      complete: this.complete,
      readFirst: (read) => this.priority.first(read),
    };
  }

  /** Reveals the selected entry's row once the page holding it has arrived. */
  private revealArrived(): void {
    if (this.toReveal !== undefined && this.model.get(this.toReveal) !== undefined) {
      const id = this.toReveal;
      this.toReveal = undefined;
      this.revealRow(id);
    }
  }

  /** Unfolds the way to the entry's row and scrolls to it. */
  private revealRow(id: string): void {
    this.model.reveal(id);
    this.refreshNow();
    const at = this.rows.findIndex((r) => r.node.id === id);
    if (at >= 0) this.list.scrollTo(at);
  }

  /**
   * Shows the entry, panel or diff the route names. An entry shows at once,
   * read by id while the tree loads, and its row is revealed when the page
   * holding it arrives; a diff waits for the whole tree.
   */
  show(route: SessionRoute): void {
    this.route = route;
    this.selected = route.entry;
    this.toReveal = undefined;
    if (route.diff !== undefined) {
      const { a, b } = route.diff;
      if (this.loaded) replace(this.pane, renderDiff(this.ctx, a, b));
      else replace(this.pane, h("p", { class: "muted" }, "Loading the tree for the diff…"));
    } else if (route.entry === undefined) replace(this.pane, emptyPane());
    else {
      if (this.model.get(route.entry) !== undefined) this.revealRow(route.entry);
      else this.toReveal = route.entry;
      replace(this.pane, renderPane(this.ctx, route.entry, route.tab));
    }
    this.list.draw();
  }

  private async load(): Promise<void> {
    const { workspace, session } = this.route;
    try {
      // The tree first: on a session the server has not read yet, a GetSession
      // beside it would compete for the same CPU and delay the first rows.
      const first = await api().session.getTree({ workspace, session, pageSize: FIRST_PAGE });
      api()
        .store.getSession({ workspace, session })
        .then(
          (meta) =>
            meta.session !== undefined && sessionHeader(this.header, meta.session, this.counts),
        )
        .catch((err) => {
          if (!this.onAuth(err)) replace(this.header, h("p", { class: "error" }, errorText(err)));
        });
      const take = (nodes: typeof first.nodes) => {
        for (const n of nodes) this.model.add(nodeOfTree(n));
        this.model.setLeaf(first.leafId);
      };
      take(first.nodes);
      this.loaded = first.nextPageToken === "";
      this.refreshNow();
      this.list.draw();
      performance.mark("sessiond:first-rows");
      this.revealArrived();
      let token = first.nextPageToken;
      while (token !== "" && !this.stop.signal.aborted) {
        replace(this.status, `${this.model.nodes.length} of ${first.headSeq} entries…`);
        await this.priority.idle();
        const page = await api().session.getTree({
          workspace,
          session,
          pageSize: NEXT_PAGE,
          pageToken: token,
        });
        take(page.nodes);
        token = page.nextPageToken;
        this.refresh();
        this.revealArrived();
      }
      this.loaded = true;
      performance.mark("sessiond:tree-complete");
      this.list.element.dataset.complete = "true";
      this.refreshNow();
      this.revealArrived();
      this.markComplete();
      if (this.route.diff !== undefined) this.show(this.route);
      void this.watch(first.headSeq);
    } catch (err) {
      if (!this.onAuth(err)) replace(this.header, h("p", { class: "error" }, errorText(err)));
    }
  }

  /** Live follow: every entry after the tree's snapshot, resumed after disconnects. */
  private async watch(afterSeq: bigint): Promise<void> {
    const setLive = (state: string, label: string) => {
      this.live.dataset.state = state;
      replace(this.live, label);
    };
    setLive("live", "live");
    try {
      const stream = watchEntriesResumable(api(), {
        workspace: this.route.workspace,
        session: this.route.session,
        afterSeq,
        signal: this.stop.signal,
        retryDelayMs: 250,
        onReconnect: (err, last) =>
          setLive("reconnecting", `reconnecting after seq ${last} (${err.code})…`),
      });
      for await (const msg of stream) {
        if (this.live.dataset.state !== "live") setLive("live", "live");
        if (msg.event.case !== "entry") continue;
        const entry = msg.event.value;
        const atEnd = this.list.atEnd();
        this.langGraph.take(entry);
        this.model.add(nodeOfEntry(entry));
        this.counts.add(entry.seq, entry.kind.case === "message");
        this.refresh(this.follow.checked && atEnd);
      }
    } catch (err) {
      setLive("ended", `follow ended: ${errorText(err)}`);
    }
  }

  /** Recomputes the rows on the next frame (many entries arriving cost one pass). */
  private refresh(toEnd = false): void {
    if (this.refreshQueued) return;
    this.refreshQueued = true;
    requestAnimationFrame(() => {
      this.refreshQueued = false;
      this.refreshNow();
      if (toEnd) this.list.scrollToEnd();
    });
  }

  private refreshNow(): void {
    this.rows = this.model.rows();
    this.list.setCount(this.rows.length);
    replace(this.status, `${this.model.nodes.length} entries`);
    this.list.element.dataset.count = String(this.model.nodes.length);
  }

  /**
   * A press and release on the same row selects it. The rows are drawn
   * anew whenever a page of the tree arrives, so the press and the release
   * may land on two elements of one row, and the browser then fires no
   * click: the row is known by its id, not by its element.
   */
  private selectOnRelease(): void {
    const rowAt = (target: EventTarget | null) =>
      target instanceof Element ? target.closest<HTMLElement>(".row")?.dataset.id : undefined;
    let pressed: string | undefined;
    this.list.element.addEventListener("pointerdown", (ev) => {
      const onFold = ev.target instanceof Element && ev.target.closest(".fold") !== null;
      pressed = ev.button === 0 && !onFold ? rowAt(ev.target) : undefined;
    });
    this.list.element.addEventListener("pointerup", (ev) => {
      const id = rowAt(ev.target);
      if (id !== undefined && id === pressed) this.select(id);
      pressed = undefined;
    });
  }

  private select(id: string): void {
    location.hash = sessionHash(this.route.workspace, this.route.session, id, this.route.tab);
  }

  /** Arrow keys or j / k select the next or previous row; Home and End scroll to either end. */
  private onKey(ev: KeyboardEvent): void {
    if (ev.key === "End" || ev.key === "Home") {
      ev.preventDefault();
      if (ev.key === "End") this.list.scrollToEnd();
      else this.list.scrollTo(0);
      return;
    }
    const step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[ev.key];
    if (step === undefined) return;
    const at = this.rows.findIndex((r) => r.node.id === this.selected);
    const to = at + step;
    const row = this.rows[Math.max(0, Math.min(this.rows.length - 1, to))];
    if (row === undefined) return;
    ev.preventDefault();
    this.select(row.node.id);
  }

  /**
   * What row `i`'s drawing depends on (VirtualList keeps its element while
   * this stays the same): the node object itself (a node changed, say
   * redacted, is a new object), its place in the tree, and its marks.
   */
  private rowKey(i: number): string {
    const row = this.rows[i] as Row;
    const id = row.node.id;
    let serial = this.nodeSerials.get(row.node);
    if (serial === undefined) {
      serial = ++this.nodeSerial;
      this.nodeSerials.set(row.node, serial);
    }
    const lg = this.langGraph.label(row.node);
    return JSON.stringify([
      serial,
      row.depth,
      row.branch,
      row.folded,
      row.hidden,
      row.onPath,
      id === this.selected,
      id === this.model.leafId,
      this.model.labelsOf(id),
      lg === undefined ? null : [lg.badge, lg.title, lg.text],
    ]);
  }

  private renderRow(i: number): HTMLElement {
    const row = this.rows[i] as Row;
    return treeRow(row, {
      selected: row.node.id === this.selected,
      leaf: row.node.id === this.model.leafId,
      labels: this.model.labelsOf(row.node.id),
      langGraph: this.langGraph.label(row.node),
      onToggle: () => {
        this.model.toggle(row.node.id);
        this.refreshNow();
      },
    });
  }
}
