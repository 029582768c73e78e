import { EntryKind, roleName, type SessionMeta, watchEntriesResumable } from "../web/index.js";
import { api, errorText } from "./api.js";
import { emptyPane, type PaneContext, paneError, renderDiff, renderPane } from "./detail-pane.js";
import { h, replace, time } from "./dom.js";
import { listHash, type Route, sessionHash } from "./route.js";
import { nodeOfEntry, nodeOfTree, type Row, TreeModel } from "./tree-model.js";
import { VirtualList } from "./virtual-list.js";

const ROW_HEIGHT = 24;
/** The first GetTree page is small so the tree shows at once; the rest come as large as fit. */
const FIRST_PAGE = 1000;

type SessionRoute = Extract<Route, { view: "session" }>;

const MARK: Partial<Record<EntryKind, string>> = {
  [EntryKind.SESSION_INFO]: "session",
  [EntryKind.COMPACTION]: "compaction",
  [EntryKind.BRANCH_SUMMARY]: "branch summary",
  [EntryKind.LABEL]: "label",
  [EntryKind.MODEL_CHANGE]: "model",
  [EntryKind.THINKING_LEVEL_CHANGE]: "thinking",
  [EntryKind.CUSTOM]: "custom",
};

/**
 * One session: its header (metadata, parent and subagent sessions), the tree
 * (virtualised rows, active path highlighted, branches off it folded), the
 * pane of the selected entry, and a live follow of new entries over
 * WatchEntries that resumes after a disconnect or a server restart.
 */
export class SessionView {
  readonly element: HTMLElement;
  private readonly model = new TreeModel();
  private rows: readonly Row[] = [];
  private readonly list: VirtualList;
  private readonly header = h("header", { class: "session-head" }, "Loading…");
  private readonly status = h("span", { id: "tree-status", class: "muted" });
  private readonly live = h(
    "span",
    { id: "live", class: "live", "data-state": "off" },
    "not following",
  );
  private readonly follow = h("input", { type: "checkbox", id: "follow", checked: true });
  private readonly pane = h("div", { class: "pane-wrap" }, emptyPane());
  private readonly stop = new AbortController();
  private route: SessionRoute;
  private selected: string | undefined;
  private refreshQueued = false;
  private loaded = false;

  constructor(
    route: SessionRoute,
    private readonly onAuth: (err: unknown) => boolean,
  ) {
    this.route = route;
    this.list = new VirtualList(ROW_HEIGHT, (i) => this.renderRow(i), "session tree");
    this.list.element.id = "tree";
    this.element = h(
      "section",
      { class: "session" },
      this.header,
      h(
        "div",
        { class: "session-body" },
        h(
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
        ),
        this.pane,
      ),
    );
    this.list.element.tabIndex = 0;
    this.list.element.addEventListener("keydown", (ev) => this.onKey(ev));
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
    };
  }

  /** Shows the entry, panel or diff the route names. */
  show(route: SessionRoute): void {
    this.route = route;
    this.selected = route.entry;
    if (!this.loaded) return;
    if (route.diff !== undefined)
      replace(this.pane, renderDiff(this.ctx, route.diff.a, route.diff.b));
    else if (route.entry === undefined) replace(this.pane, emptyPane());
    else {
      this.model.reveal(route.entry);
      this.refreshNow();
      const at = this.rows.findIndex((r) => r.node.id === route.entry);
      if (at >= 0) this.list.scrollTo(at);
      replace(this.pane, renderPane(this.ctx, route.entry, route.tab));
    }
    this.list.draw();
  }

  private async load(): Promise<void> {
    const { workspace, session } = this.route;
    try {
      const [meta, first] = await Promise.all([
        api().store.getSession({ workspace, session }),
        api().session.getTree({ workspace, session, pageSize: FIRST_PAGE }),
      ]);
      if (meta.session !== undefined) this.renderHeader(meta.session);
      const take = (nodes: typeof first.nodes) => {
        for (const n of nodes) this.model.add(nodeOfTree(n));
        this.model.setLeaf(first.leafId);
      };
      take(first.nodes);
      this.loaded = first.nextPageToken === "";
      this.refreshNow();
      this.list.draw();
      performance.mark("sessiond:first-rows");
      this.show(this.route);
      let token = first.nextPageToken;
      while (token !== "" && !this.stop.signal.aborted) {
        replace(this.status, `${this.model.nodes.length} of ${first.headSeq} entries…`);
        const page = await api().session.getTree({ workspace, session, pageToken: token });
        take(page.nodes);
        token = page.nextPageToken;
        this.refresh();
      }
      this.loaded = true;
      performance.mark("sessiond:tree-complete");
      this.list.element.dataset.complete = "true";
      this.refreshNow();
      this.show(this.route);
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
        const atEnd = this.list.atEnd();
        this.model.add(nodeOfEntry(msg.event.value));
        this.refresh(this.follow.checked && atEnd);
      }
    } catch (err) {
      setLive("ended", `follow ended: ${errorText(err)}`);
    }
  }

  private renderHeader(s: SessionMeta): void {
    const subagents = h("span", { class: "subagents" });
    replace(
      this.header,
      h("a", { href: listHash(s.workspace) }, s.workspace),
      " / ",
      h("h2", null, s.title ?? "(untitled)"),
      " ",
      h("code", null, s.id),
      h(
        "div",
        { class: "muted" },
        "created ",
        time(s.createdAt === undefined ? undefined : new Date(Number(s.createdAt.seconds) * 1000)),
        ` · ${s.entryCount} entries · ${s.messageCount} messages`,
        s.agentType !== undefined ? ` · agent ${s.agentType}` : "",
        ...Object.entries(s.tags).map(([k, v]) => h("span", { class: "badge tag" }, `${k}=${v}`)),
      ),
      s.parentSessionId !== undefined &&
        h(
          "div",
          null,
          "subagent of ",
          h("a", { href: sessionHash(s.workspace, s.parentSessionId) }, s.parentSessionId),
        ),
      subagents,
    );
    api()
      .store.listSessions({ workspace: s.workspace, parentSessionId: s.id, pageSize: 100 })
      .then((res) => {
        if (res.sessions.length === 0) return;
        replace(
          subagents,
          "subagents: ",
          ...res.sessions.flatMap((c) => [
            h(
              "a",
              { href: sessionHash(s.workspace, c.id), class: "subagent" },
              `${c.agentType ?? "agent"} ${c.title ?? c.id}`,
            ),
            " ",
          ]),
        );
      })
      .catch(() => {});
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

  private onKey(ev: KeyboardEvent): void {
    const at = this.rows.findIndex((r) => r.node.id === this.selected);
    const to =
      ev.key === "ArrowDown" || ev.key === "j"
        ? at + 1
        : ev.key === "ArrowUp" || ev.key === "k"
          ? at - 1
          : -2;
    if (to === -2) {
      if (ev.key === "End") this.list.scrollToEnd();
      return;
    }
    const row = this.rows[Math.max(0, Math.min(this.rows.length - 1, to))];
    if (row === undefined) return;
    ev.preventDefault();
    location.hash = sessionHash(
      this.route.workspace,
      this.route.session,
      row.node.id,
      this.route.tab,
    );
  }

  private renderRow(i: number): HTMLElement {
    const row = this.rows[i] as Row;
    const n = row.node;
    const classes = [
      "row",
      row.onPath ? "on-path" : "",
      n.id === this.selected ? "selected" : "",
      `kind-${n.kind}`,
    ];
    const el = h("div", {
      class: classes.join(" "),
      role: "listitem",
      "data-id": n.id,
      "data-seq": n.seq,
    });
    const indent = h("span", { class: "indent" });
    indent.style.width = `${Math.min(row.depth, 30) * 14}px`;
    el.append(indent);
    if (row.branch || row.folded) {
      const toggle = h(
        "button",
        { class: "fold", "aria-expanded": String(!row.folded), title: "fold / unfold" },
        row.folded ? `▸ +${row.hidden}` : "▾",
      );
      toggle.addEventListener("click", (ev) => {
        ev.stopPropagation();
        this.model.toggle(n.id);
        this.refreshNow();
      });
      el.append(toggle);
    }
    const mark = MARK[n.kind];
    if (mark !== undefined)
      el.append(
        h(
          "span",
          { class: `badge mark-${mark.replace(" ", "-")}` },
          n.kind === EntryKind.LABEL ? (n.label ?? mark) : mark,
        ),
      );
    else el.append(h("span", { class: `badge role-${roleName(n.role)}` }, roleName(n.role)));
    el.append(h("span", { class: "preview" }, n.preview || n.id));
    for (const label of this.model.labelsOf(n.id))
      el.append(h("span", { class: "badge label" }, label));
    if (n.id === this.model.leafId) el.append(h("span", { class: "badge leaf" }, "leaf"));
    el.addEventListener("click", () => {
      location.hash = sessionHash(this.route.workspace, this.route.session, n.id, this.route.tab);
    });
    return el;
  }
}
