import type { WorkspaceSummary } from "../web/index.js";
import { api, errorText } from "./api.js";
import { h, replace } from "./dom.js";
import { listHash } from "./route.js";

const PAGE = 100;

function workspaceRow(w: WorkspaceSummary): HTMLElement {
  return h(
    "tr",
    { class: "workspace-row", "data-workspace": w.name },
    h("td", null, h("a", { href: listHash(w.name) }, w.name)),
    h("td", { class: "num" }, String(w.sessionCount)),
    h("td", { class: "num" }, String(w.subagentSessionCount)),
  );
}

/**
 * The start page: the workspaces that hold sessions (ListWorkspaces: only
 * those the token may use), by name, a page at a time, each linking to its
 * sessions; and a field to open any workspace by name (an empty one is not
 * listed).
 */
export function workspacesView(onAuth: (err: unknown) => boolean): HTMLElement {
  const status = h("p", { class: "status muted" }, "Loading…");
  const rows = h("tbody");
  const table = h(
    "table",
    { class: "workspaces" },
    h(
      "thead",
      null,
      h("tr", null, ...["workspace", "sessions", "subagent sessions"].map((c) => h("th", null, c))),
    ),
    rows,
  );
  const more = h("button", { class: "more", hidden: true }, "More");
  let token = "";
  const load = async () => {
    more.hidden = true;
    try {
      const res = await api().store.listWorkspaces({ pageSize: PAGE, pageToken: token });
      for (const w of res.workspaces) rows.append(workspaceRow(w));
      token = res.nextPageToken;
      const n = rows.childElementCount;
      replace(
        status,
        n === 0
          ? "No workspace holds a session yet."
          : `${n} workspaces${token === "" ? "" : " so far"}`,
      );
      more.hidden = token === "";
    } catch (err) {
      if (!onAuth(err)) replace(status, h("span", { class: "error" }, errorText(err)));
    }
  };
  more.addEventListener("click", () => void load());
  void load();

  const name = h("input", { name: "workspace", placeholder: "name", type: "text" });
  const open = h(
    "form",
    { class: "filters open-workspace" },
    h("label", null, "open workspace ", name),
    h("button", { type: "submit" }, "Open"),
  );
  open.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const ws = name.value.trim();
    if (ws !== "") location.hash = listHash(ws);
  });
  return h(
    "section",
    { class: "workspaces" },
    h("h2", null, "Workspaces"),
    status,
    table,
    more,
    open,
  );
}
