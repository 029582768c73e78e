import { h } from "./dom.js";
import { listHash } from "./route.js";

/**
 * What a link that does not decode shows (a percent-escape cut short when
 * it was copied, or edited by hand): the link as given, so the user sees
 * what is wrong with it, and a way on to the workspace's sessions.
 */
export function badLinkView(hash: string, workspace: string): HTMLElement {
  return h(
    "section",
    { class: "bad-link" },
    h("h2", null, "This link is malformed"),
    h(
      "p",
      null,
      "Part of it is not valid percent-encoding, so it names no session or entry: ",
      h("code", null, hash),
    ),
    h("p", null, h("a", { href: listHash(workspace) }, `Sessions of workspace ${workspace}`)),
  );
}
