import type { SessionMeta } from "../web/index.js";
import { api, isSnapshot } from "./api.js";
import { h, replace, time } from "./dom.js";
import { KIND_TAG, NS_TAG, THREAD_TAG } from "./langgraph.js";
import { listHash, sessionHash } from "./route.js";
import type { SessionCounts } from "./session-counts.js";
import { usagePanel } from "./usage-panel.js";

/**
 * A session's header: workspace, title, id, counts (kept current by the
 * view's live follow), tags, agent type, the parent session of a subagent,
 * and links to its own subagents (ListSessions with parent_session_id,
 * filled in when it answers).
 */
export function sessionHeader(into: HTMLElement, s: SessionMeta, counts: SessionCounts): void {
  counts.setSnapshot(s);
  const subagents = h("span", { class: "subagents" });
  replace(
    into,
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
      " · ",
      counts.element,
      s.agentType !== undefined ? ` · agent ${s.agentType}` : "",
      ...Object.entries(s.tags).map(([k, v]) => h("span", { class: "badge tag" }, `${k}=${v}`)),
    ),
    langGraphLine(s),
    s.parentSessionId !== undefined &&
      h(
        "div",
        null,
        "subagent of ",
        h("a", { href: sessionHash(s.workspace, s.parentSessionId) }, s.parentSessionId),
      ),
    subagents,
    usagePanel(s.workspace, s.id, isSnapshot()),
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

/**
 * A session a LangGraph saver keeps (tagged `langgraph.kind`): the thread
 * it holds, and for a subgraph's namespace, the namespace. The thread id is
 * in the tags (both savers; the Python one leaves out ids over 256 bytes),
 * else in the metadata (`langgraph_thread` of the JS saver, `thread_id` of
 * the Python one).
 */
function langGraphLine(s: SessionMeta): HTMLElement | undefined {
  const kind = s.tags[KIND_TAG];
  if (kind !== "thread" && kind !== "namespace") return undefined;
  const meta = s.metadata ?? {};
  const fromMeta = meta.langgraph_thread ?? meta.thread_id;
  const thread = s.tags[THREAD_TAG] ?? (typeof fromMeta === "string" ? fromMeta : undefined);
  const ns = s.tags[NS_TAG];
  return h(
    "div",
    { class: "langgraph-thread" },
    h("span", { class: "badge lg-thread" }, "LangGraph"),
    " thread ",
    thread === undefined
      ? h("span", { class: "muted" }, "(id not stored)")
      : h("code", null, thread),
    kind === "namespace" ? h("span", null, " · namespace ", h("code", null, ns ?? "?")) : undefined,
    h("span", { class: "muted" }, " · a checkpoint's row: step · source · checkpoint id"),
  );
}
