/**
 * The viewer's deep links: everything a view shows is named by the URL's
 * hash, so a link to a session, an entry, the state at an entry or a diff can
 * be shared and reloaded (the token is never part of it).
 *
 *   #/                              the workspaces (the start page)
 *   #/w/WS                          sessions of a workspace (?title=&tag=k=v&sort=&order=&q=)
 *   #/w/WS/s/SESSION                one session, its tree
 *   #/w/WS/s/SESSION/e/ENTRY        ... with an entry's details (?tab=context|history)
 *   #/w/WS/s/SESSION/diff/A/B       the branches ending at entries A and B side by side
 *
 * A hash whose segments do not decode (a broken percent-escape from a
 * truncated or hand-edited link) is a route of its own, so the viewer can say
 * so instead of throwing in the router.
 */

/** What the hash names. */
export type Route =
  | { view: "workspaces" }
  | { view: "list"; workspace: string; params: URLSearchParams }
  | {
      view: "session";
      workspace: string;
      session: string;
      entry?: string | undefined;
      tab: Tab;
      diff?: { a: string; b: string } | undefined;
    }
  | { view: "bad-link"; hash: string; workspace: string };

/** The panels of a selected entry: the entry itself, or the state at it in either view. */
export type Tab = "entry" | "context" | "history";

const TABS: readonly Tab[] = ["entry", "context", "history"];

/** A segment decoded, or undefined when its percent-escapes are malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The route of a hash (none: the workspaces; an unknown one: the default workspace's list). */
export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?", 2);
  const params = new URLSearchParams(query);
  const decoded = path
    .split("/")
    .filter((p) => p !== "")
    .map(decodeSegment);
  // A workspace that decodes is kept even in a bad link: the error view links to its list.
  const workspace = (decoded[0] === "w" ? decoded[1] : undefined) ?? "default";
  if (decoded.includes(undefined)) return { view: "bad-link", hash, workspace };
  const parts = decoded as string[];
  if (parts.length === 0 || (parts[0] === "w" && parts.length === 1)) return { view: "workspaces" };
  if (parts[2] !== "s" || parts[3] === undefined) return { view: "list", workspace, params };
  const session = parts[3];
  if (parts[4] === "diff" && parts[5] !== undefined && parts[6] !== undefined) {
    return {
      view: "session",
      workspace,
      session,
      tab: "entry",
      diff: { a: parts[5], b: parts[6] },
    };
  }
  const tab = TABS.find((t) => t === params.get("tab")) ?? "entry";
  const entry = parts[4] === "e" ? parts[5] : undefined;
  return { view: "session", workspace, session, entry, tab };
}

const seg = encodeURIComponent;

/** The hash of the workspaces' list, the start page. */
export const WORKSPACES_HASH = "#/";

/** The hash of a workspace's list, with its filters. */
export function listHash(workspace: string, params?: URLSearchParams): string {
  const q = params?.toString() ?? "";
  return `#/w/${seg(workspace)}${q === "" ? "" : `?${q}`}`;
}

/** The hash of a session, optionally an entry of it and a panel. */
export function sessionHash(workspace: string, session: string, entry?: string, tab?: Tab): string {
  const base = `#/w/${seg(workspace)}/s/${seg(session)}`;
  if (entry === undefined) return base;
  return `${base}/e/${seg(entry)}${tab === undefined || tab === "entry" ? "" : `?tab=${tab}`}`;
}

/** The hash of the diff of the branches ending at `a` and `b`. */
export function diffHash(workspace: string, session: string, a: string, b: string): string {
  return `#/w/${seg(workspace)}/s/${seg(session)}/diff/${seg(a)}/${seg(b)}`;
}
