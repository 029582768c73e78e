import { SessionEventType } from "../web/index.js";
import { api, needsToken } from "./api.js";
import { h, replace } from "./dom.js";

/**
 * A notice on the sessions list that sessions of its workspace were created,
 * appended to or deleted since it was drawn (WatchSessions), with a button to
 * draw the list again. The list itself stays put while it is read: rows
 * moving under the pointer would be worse than a stale page. Reconnects from
 * the last cursor after a disconnect; ends with `signal`.
 */
export function sessionChanges(
  workspace: string,
  signal: AbortSignal,
  reload: () => void,
): HTMLElement {
  const changed = new Set<string>();
  const button = h("button", { class: "link" }, "show them");
  button.addEventListener("click", reload);
  const el = h("p", { class: "changes", hidden: true });
  void (async () => {
    let cursor = "";
    while (!signal.aborted) {
      try {
        const stream = api().store.watchSessions({ workspace, afterCursor: cursor }, { signal });
        for await (const ev of stream) {
          if (ev.cursor !== "") cursor = ev.cursor;
          if (ev.type === SessionEventType.UNSPECIFIED) continue;
          changed.add(ev.sessionId);
          replace(
            el,
            `${changed.size} session${changed.size === 1 ? "" : "s"} changed since this page was drawn: `,
            button,
          );
          el.hidden = false;
        }
      } catch (err) {
        if (signal.aborted || needsToken(err)) return;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  })();
  return el;
}
