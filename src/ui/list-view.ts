import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  Health,
  type SearchHit,
  type SessionFilterSchema,
  type SessionMeta,
  SortBy,
  SortOrder,
} from "../web/index.js";
import { api, errorText } from "./api.js";
import { h, replace, time } from "./dom.js";
import { listHash, sessionHash, WORKSPACES_HASH } from "./route.js";
import { sessionChanges } from "./session-changes.js";

const PAGE = 50;

/** The filter of a list URL: title, tags (k=v, repeated), created after/before (dates). */
function filterOf(params: URLSearchParams): MessageInitShape<typeof SessionFilterSchema> {
  const tags: Record<string, string> = {};
  for (const t of params.getAll("tag")) {
    const at = t.indexOf("=");
    if (at > 0) tags[t.slice(0, at)] = t.slice(at + 1);
  }
  const date = (key: string) => {
    const v = params.get(key);
    return v ? timestampFromDate(new Date(v)) : undefined;
  };
  return {
    titleContains: params.get("title") ?? "",
    tags,
    createdAfter: date("after"),
    createdBefore: date("before"),
  };
}

/** The `key=value` pairs of the tags field, split at commas (a value may hold spaces). */
function tagsOf(field: string): string[] {
  return field
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t.indexOf("=") > 0);
}

function sessionRow(workspace: string, s: SessionMeta): HTMLElement {
  return h(
    "tr",
    { class: "session-row", "data-session": s.id },
    h("td", null, h("a", { href: sessionHash(workspace, s.id) }, s.title ?? "(untitled)")),
    h("td", null, h("code", null, s.id)),
    h(
      "td",
      null,
      time(s.createdAt === undefined ? undefined : new Date(Number(s.createdAt.seconds) * 1000)),
    ),
    h(
      "td",
      null,
      time(s.updatedAt === undefined ? undefined : new Date(Number(s.updatedAt.seconds) * 1000)),
    ),
    h("td", { class: "num" }, String(s.entryCount)),
    h("td", { class: "num" }, String(s.messageCount)),
    h(
      "td",
      null,
      ...Object.entries(s.tags).map(([k, v]) => h("span", { class: "badge tag" }, `${k}=${v}`)),
      s.health === Health.CORRUPT &&
        h("span", { class: "badge error", title: s.healthDetail }, "corrupt"),
    ),
  );
}

function hitRow(workspace: string, hit: SearchHit): HTMLElement {
  return h(
    "li",
    { class: "hit" },
    h(
      "a",
      { href: sessionHash(workspace, hit.sessionId, hit.entryId) },
      hit.sessionTitle ?? hit.sessionId,
    ),
    " ",
    h("span", { class: "muted" }, `seq ${hit.seq}`),
    h("div", { class: "snippet" }, hit.snippet),
  );
}

/**
 * The sessions of a workspace, newest first, with ListSessions' filters, or
 * the hits of a SearchEntries query; both a page at a time ("More"). The
 * form writes the URL, so a filtered list is a link too. A notice says when
 * sessions changed since (session-changes.ts, over WatchSessions until
 * `signal` ends); `reload` draws the list again.
 */
export function listView(
  workspace: string,
  params: URLSearchParams,
  onAuth: (err: unknown) => boolean,
  signal: AbortSignal,
  reload: () => void,
): HTMLElement {
  const input = (name: string, placeholder: string, type = "text") =>
    h("input", { name, placeholder, type, value: params.get(name) ?? "" });
  // Several tags in one field ("team=a, env=prod"): a session must carry every one.
  const tagInput = h("input", {
    name: "tag",
    placeholder: "key=value, key=value",
    type: "text",
    value: params.getAll("tag").join(", "),
  });
  const sort = h(
    "select",
    { name: "sort" },
    h("option", { value: "created", selected: params.get("sort") !== "updated" }, "created"),
    h("option", { value: "updated", selected: params.get("sort") === "updated" }, "updated"),
  );
  const form = h(
    "form",
    { class: "filters" },
    h("label", null, "workspace ", input("workspace", "default")),
    h("label", null, "title ", input("title", "contains")),
    h("label", null, "tags ", tagInput),
    h("label", null, "created after ", input("after", "", "date")),
    h("label", null, "before ", input("before", "", "date")),
    h("label", null, "sort by ", sort),
    h("label", null, "search ", input("q", "words in messages")),
    h("button", { type: "submit" }, "Apply"),
  );
  (form.elements.namedItem("workspace") as HTMLInputElement).value = workspace;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const next = new URLSearchParams();
    for (const [k, v] of data) {
      if (k === "workspace" || typeof v !== "string" || v === "") continue;
      if (k === "tag") for (const t of tagsOf(v)) next.append(k, t);
      else next.append(k, v);
    }
    location.hash = listHash(String(data.get("workspace") || "default"), next);
  });

  const status = h("p", { class: "status muted" }, "Loading…");
  const more = h("button", { class: "more", hidden: true }, "More");
  const query = params.get("q") ?? "";
  const filter = filterOf(params);
  let token = "";
  const results = query === "" ? h("tbody") : h("ul", { class: "hits" });
  const table =
    query === ""
      ? h(
          "table",
          { class: "sessions" },
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              ...["title", "id", "created", "updated", "entries", "messages", "tags"].map((c) =>
                h("th", null, c),
              ),
            ),
          ),
          results,
        )
      : results;

  const load = async () => {
    more.hidden = true;
    try {
      if (query === "") {
        const res = await api().store.listSessions({
          workspace,
          pageSize: PAGE,
          pageToken: token,
          order: SortOrder.NEWEST_FIRST,
          sortBy: params.get("sort") === "updated" ? SortBy.UPDATED : SortBy.CREATED,
          filter,
        });
        for (const s of res.sessions) results.append(sessionRow(workspace, s));
        token = res.nextPageToken;
      } else {
        const res = await api().store.searchEntries({
          workspace,
          query,
          pageSize: PAGE,
          pageToken: token,
          filter,
        });
        for (const hit of res.hits) results.append(hitRow(workspace, hit));
        token = res.nextPageToken;
      }
      const n = results.childElementCount;
      replace(
        status,
        `${n} ${query === "" ? "sessions" : "hits"}${token === "" ? "" : " so far"} in workspace ${workspace}`,
      );
      more.hidden = token === "";
    } catch (err) {
      if (!onAuth(err)) replace(status, h("span", { class: "error" }, errorText(err)));
    }
  };
  more.addEventListener("click", () => void load());
  void load();
  const changes = sessionChanges(workspace, signal, reload);
  const switcher = h(
    "p",
    { class: "switcher" },
    h("a", { href: WORKSPACES_HASH, class: "all-workspaces" }, "All workspaces"),
  );
  return h("section", { class: "list" }, switcher, form, changes, status, table, more);
}
