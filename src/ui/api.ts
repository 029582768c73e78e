import { Code, ConnectError } from "@connectrpc/connect";
import { createSessiondClient, type SessiondClient } from "../web/index.js";
import { exportedClient } from "./static-source.js";

/**
 * The viewer's one client to the server that serves it, with the bearer
 * token the user entered. The token lives in sessionStorage only: it
 * survives reloads of this tab, never reaches a URL, a log line or another
 * tab, and is gone when the tab closes.
 */
const TOKEN_KEY = "sessiond.token";

let cached: { token: string | null; client: SessiondClient } | undefined;

/** The token entered in this tab, if any. */
export function currentToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps `token` for this tab (an empty one forgets it). */
export function setToken(token: string): void {
  if (token === "") sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** An HTML export's embedded session (static-source.ts); undefined on the live viewer. */
const exported = exportedClient();

/** A share link's snapshot (share-source.ts), once loaded; undefined elsewhere. */
let shared: SessiondClient | undefined;

/** Answers every call of the viewer from a share's snapshot from now on. */
export function useSnapshot(client: SessiondClient): void {
  shared = client;
}

/** True in an HTML export or a share link: the page answers from data it holds. */
export function isSnapshot(): boolean {
  return exported !== undefined || shared !== undefined;
}

/** The client, rebuilt when the token changes (an export's or a share's static one there). */
export function api(): SessiondClient {
  if (exported !== undefined) return exported;
  if (shared !== undefined) return shared;
  const token = currentToken();
  if (cached === undefined || cached.token !== token) {
    cached = {
      token,
      client: createSessiondClient({
        baseUrl: location.origin,
        timeoutMs: 30_000,
        retry: { maxAttempts: 2 },
        // Big parts stay references: a pane shows their start and loads the
        // rest when asked (entry-view.ts), never a 5 MB tool output unasked.
        blobs: "refs",
        ...(token === null ? {} : { token }),
      }),
    };
  }
  return cached.client;
}

/** A blob of a workspace, whole (GetBlob's chunks, in order). */
export async function readBlob(
  workspace: string,
  sha256: string,
  size: number,
): Promise<Uint8Array> {
  const data = new Uint8Array(size);
  let at = 0;
  for await (const chunk of api().store.getBlob({ workspace, sha256 })) {
    data.set(chunk.data, Number(chunk.offset));
    at += chunk.data.length;
  }
  if (at !== size) throw new Error(`blob ${sha256}: read ${at} of ${size} bytes`);
  return data;
}

/** True when a failure means "enter a (different) token". */
export function needsToken(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unauthenticated || code === Code.PermissionDenied;
}

/** A failure as one line for the page: the server's own message, never a token. */
export function errorText(err: unknown): string {
  const ce = ConnectError.from(err);
  return `${Code[ce.code] ?? ce.code}: ${ce.rawMessage}`;
}
