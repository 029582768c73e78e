import { Code, ConnectError } from "@connectrpc/connect";
import { currentToken, errorText, needsToken, setToken, useSnapshot } from "./api.js";
import { badLinkView } from "./bad-link-view.js";
import { h, replace } from "./dom.js";
import { listView } from "./list-view.js";
import { parseRoute, type Route, sessionHash } from "./route.js";
import { SessionView } from "./session-view.js";
import { type LoadedShare, loadShare, shareTokenOf } from "./share-source.js";
import { workspacesView } from "./workspaces-view.js";

/**
 * The viewer's entry: routes the hash to a view, keeps one session view alive
 * while only the selected entry or panel changes (so a 100,000-entry tree is
 * read once), and asks for a token when the server wants one.
 */
const app = document.getElementById("app") as HTMLElement;
const auth = document.getElementById("auth") as HTMLElement;
let session: SessionView | undefined;
/** Ends the list's watch when another view replaces it. */
let listWatch = new AbortController();

function tokenForm(message: string): HTMLElement {
  const input = h("input", {
    type: "password",
    name: "token",
    autocomplete: "off",
    placeholder: "bearer token",
  });
  const form = h(
    "form",
    { class: "token-form" },
    h("p", null, message),
    h("label", null, "Token ", input),
    " ",
    h("button", { type: "submit" }, "Use token"),
    h(
      "p",
      { class: "muted" },
      "Kept in this tab only (sessionStorage), sent as an Authorization header, never put in a URL.",
    ),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    input.value = "";
    renderAuth();
    render(true);
  });
  return form;
}

/** A view's failure that a token may fix: ask for one instead of showing the error. */
function onAuth(err: unknown): boolean {
  if (!needsToken(err)) return false;
  session?.dispose();
  session = undefined;
  replace(app, tokenForm(`The server refused: ${errorText(err)}.`));
  return true;
}

function renderAuth(): void {
  if (currentToken() === null) {
    replace(auth, h("span", { class: "muted" }, "no token"));
    return;
  }
  const forget = h("button", { class: "link" }, "forget token");
  forget.addEventListener("click", () => {
    setToken("");
    renderAuth();
    render(true);
  });
  replace(auth, h("span", { class: "muted" }, "token set "), forget);
}

function render(force = false): void {
  const route: Route = parseRoute(location.hash);
  listWatch.abort();
  if (route.view === "session") {
    if (force || session === undefined || !session.shows(route)) {
      session?.dispose();
      session = new SessionView(route, onAuth);
      replace(app, session.element);
    }
    session.show(route);
    return;
  }
  session?.dispose();
  session = undefined;
  if (route.view === "bad-link") {
    replace(app, badLinkView(route.hash, route.workspace));
    return;
  }
  if (route.view === "workspaces") {
    replace(app, workspacesView(onAuth));
    return;
  }
  listWatch = new AbortController();
  replace(
    app,
    listView(route.workspace, route.params, onAuth, listWatch.signal, () => render()),
  );
}

/**
 * A share link (/share/<token>): the one session of the snapshot, read-only.
 * Any other route (the workspaces, a list, another session) shows the
 * snapshot again; a link that does not read (unknown, revoked, expired,
 * deleted) is a "not found" page, with one text for every reason.
 */
function renderShare(loaded: LoadedShare): void {
  const { share } = loaded;
  let route = parseRoute(location.hash);
  if (
    route.view !== "session" ||
    route.session !== share.sessionId ||
    route.workspace !== share.workspace
  ) {
    history.replaceState(null, "", sessionHash(share.workspace, share.sessionId, share.entryId));
    route = parseRoute(location.hash);
  }
  if (route.view !== "session") return;
  if (session === undefined || !session.shows(route)) {
    session?.dispose();
    session = new SessionView(route, () => false);
    replace(app, session.element);
  }
  session.show(route);
}

function shareNotFound(err: unknown): void {
  const missing = ConnectError.from(err).code === Code.NotFound;
  document.title = missing ? "Share not found · sessiond" : "Share unavailable · sessiond";
  replace(
    app,
    h(
      "section",
      { class: "share-missing", id: "share-missing" },
      h("h2", null, missing ? "404 · share link not found" : "This share cannot be read now"),
      h(
        "p",
        null,
        missing
          ? "This link does not exist, was revoked, or has expired. Ask whoever shared it for a new one."
          : errorText(err),
      ),
    ),
  );
}

async function startShare(token: string): Promise<void> {
  // A snapshot does not change: no live follow to show (app.css).
  document.body.classList.add("shared");
  replace(auth, h("span", { class: "badge share-badge" }, "shared · read-only"));
  let loaded: LoadedShare;
  try {
    loaded = await loadShare(token);
  } catch (err) {
    shareNotFound(err);
    return;
  }
  useSnapshot(loaded.client);
  document.title = `${loaded.meta.title ?? "Shared session"} · sessiond`;
  window.addEventListener("hashchange", () => renderShare(loaded));
  renderShare(loaded);
}

const shareToken = shareTokenOf(location.pathname);
if (shareToken !== undefined) {
  void startShare(shareToken);
} else {
  renderAuth();
  window.addEventListener("hashchange", () => render());
  render();
}
