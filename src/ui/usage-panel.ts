import type { GetUsageResponse } from "../web/index.js";
import { api, errorText } from "./api.js";
import { h, replace } from "./dom.js";
import { sessionHash } from "./route.js";
import { totalsText } from "./usage-sums.js";

/**
 * What a session cost (GetUsage): the whole session with its subagents, the
 * current path, the context's size, and each branch (abandoned ones
 * included) with what it cost beyond the current path, its leaf linked.
 * GetUsage reads the whole tree and every subagent, so the live viewer asks
 * when the panel is opened; in an export or a share (`open`) the page sums
 * its own entries (usage-sums.ts) at once.
 */
export function usagePanel(workspace: string, sessionId: string, open: boolean): HTMLElement {
  const body = h("div", { class: "usage-body" }, "loading…");
  const el = h(
    "details",
    { class: "usage-panel muted", id: "usage" },
    h("summary", null, "usage"),
    body,
  );
  let asked = false;
  const load = () => {
    if (asked) return;
    asked = true;
    api()
      .session.getUsage({ workspace, session: sessionId })
      .then((u) => replace(body, ...usageLines(u, workspace, sessionId)))
      .catch((err: unknown) => replace(body, errorText(err)));
  };
  el.addEventListener("toggle", () => {
    if ((el as HTMLDetailsElement).open) load();
  });
  if (open) {
    (el as HTMLDetailsElement).open = true;
    load();
  }
  return el;
}

function usageLines(u: GetUsageResponse, workspace: string, sessionId: string): HTMLElement[] {
  const line = (label: string, text: string, id: string) =>
    h("div", { class: "usage-line", "data-usage": id }, h("b", null, label), " ", text);
  const out: HTMLElement[] = [
    line("session", u.total === undefined ? "-" : totalsText(u.total), "total"),
    line("current path", u.currentPath === undefined ? "-" : totalsText(u.currentPath), "path"),
  ];
  if (u.subagents.length > 0 && u.subagentsTotal !== undefined) {
    out.push(line(`subagents (${u.subagents.length})`, totalsText(u.subagentsTotal), "subagents"));
  }
  if (u.forked !== undefined && u.forked.messages > 0n) {
    out.push(line("forked (billed in the source)", totalsText(u.forked), "forked"));
  }
  if (u.contextTokens > 0n) out.push(line("context", `≈ ${u.contextTokens} tokens`, "context"));
  if (u.branches.length > 1) {
    out.push(
      h(
        "details",
        { class: "usage-branches", open: "" },
        h("summary", null, `${u.branches.length} branches`),
        h(
          "ul",
          null,
          ...u.branches.map((b) =>
            h(
              "li",
              { "data-branch": b.leafEntryId },
              h("a", { href: sessionHash(workspace, sessionId, b.leafEntryId) }, b.leafEntryId),
              b.current ? " (current) " : b.forkEntryId ? ` (from ${b.forkEntryId}) ` : " ",
              b.usage === undefined ? "-" : totalsText(b.usage),
            ),
          ),
        ),
      ),
    );
  }
  return out;
}
