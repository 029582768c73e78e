import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type Entry,
  EntrySchema,
  foldPath,
  GetBlobResponseSchema,
  GetEntriesResponseSchema,
  GetSessionResponseSchema,
  GetStateResponseSchema,
  GetTreeResponseSchema,
  ListSessionsResponseSchema,
  ListWorkspacesResponseSchema,
  type SessiondClient,
  type SessionMeta,
  SessionMetaSchema,
  type SessionState,
  type TreeNode,
  TreeNodeSchema,
  View,
} from "../web/index.js";
import { sessionHash } from "./route.js";
import { usageOfEntries } from "./usage-sums.js";

/**
 * The static data source of an HTML export (`sessiond export --format
 * html`, src/cli/export-html.ts): one session embedded in the page as a
 * `<script type="application/json" id="sessiond-export">` element, answered
 * to the viewer as the server would answer it, with no network at all. The
 * viewer's code is the live viewer's; only api() hands out this client
 * instead of the server's when the page holds the element (read once, when
 * the bundle loads, before anything is drawn: no message text can be on the
 * page yet, and the live viewer's page never holds it).
 */

/** The element the export writes its data into. */
export const EXPORT_DATA_ID = "sessiond-export";

/** What the export embeds (proto JSON; the CLI writes the same shape). */
export interface ExportData {
  readonly format: "sessiond-export/1";
  readonly workspace: string;
  /** SessionMeta. */
  readonly session: JsonValue;
  readonly leafId: string;
  readonly headSeq: string;
  /** GetTree's nodes, in seq order. */
  readonly nodes: JsonValue[];
  /** Every entry up to headSeq, in seq order. */
  readonly entries: JsonValue[];
  /** The bytes of the blobs the entries name, base64, by SHA-256. */
  readonly blobs: Record<string, string>;
  /** Blobs left out (over maxInlineBytes): their size, by SHA-256. */
  readonly omittedBlobs: Record<string, string>;
  readonly maxInlineBytes: number;
  /** Why blobs were left out, when not for --max-inline-bytes (a share link's snapshot). */
  readonly omittedWhy?: string;
}

const notFound = (what: string) => new ConnectError(`${what} is not in this export`, Code.NotFound);

/** A server stream that never sends and ends when the caller aborts (no live follow in a file). */
async function* quiet(signal: AbortSignal | undefined): AsyncGenerator<never> {
  if (signal === undefined || signal.aborted) return;
  await new Promise<void>((done) => signal.addEventListener("abort", () => done(), { once: true }));
}

function decodeBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

interface Req {
  workspace?: string;
  session?: string;
}

/** The client the viewer uses in an export: the embedded session's answers. */
export function staticClient(data: ExportData): SessiondClient {
  const meta: SessionMeta = fromJson(SessionMetaSchema, data.session);
  const headSeq = BigInt(data.headSeq);
  let nodes: TreeNode[] | undefined;
  const raw = new Map<string, JsonValue>();
  for (const e of data.entries) raw.set((e as { id: string }).id, e);
  const decoded = new Map<string, Entry>();
  const entry = (id: string): Entry | undefined => {
    let e = decoded.get(id);
    if (e === undefined) {
      const json = raw.get(id);
      if (json === undefined) return undefined;
      e = fromJson(EntrySchema, json);
      decoded.set(id, e);
    }
    return e;
  };
  const states = new Map<string, SessionState>();

  const check = (req: Req) => {
    if ((req.workspace ?? "") !== data.workspace) throw notFound(`workspace "${req.workspace}"`);
    if (req.session !== undefined && req.session !== meta.id) {
      throw notFound(`session "${req.session}"`);
    }
  };

  const fold = (at: string, view: View): SessionState => {
    const key = `${view}:${at}`;
    const known = states.get(key);
    if (known !== undefined) return known;
    const target = entry(at);
    if (target === undefined) throw notFound(`entry "${at}"`);
    if (target.kind.case === "leaf") {
      throw new ConnectError(
        `entry "${at}" is a Leaf entry and has no state`,
        Code.InvalidArgument,
      );
    }
    const path: Entry[] = [];
    for (let e: Entry | undefined = target; e !== undefined; ) {
      path.push(e);
      e = e.parentId === undefined ? undefined : entry(e.parentId);
    }
    const state = foldPath(path.reverse(), view);
    state.headSeq = headSeq;
    state.currentLeafId = data.leafId;
    states.set(key, state);
    return state;
  };

  const session = {
    async getTree(req: Req) {
      check(req);
      nodes ??= data.nodes.map((n) => fromJson(TreeNodeSchema, n));
      return create(GetTreeResponseSchema, { nodes, leafId: data.leafId, headSeq });
    },
    async getEntries(req: Req & { entryIds?: string[]; afterSeq?: bigint; limit?: number }) {
      check(req);
      let entries: Entry[];
      if (req.entryIds !== undefined && req.entryIds.length > 0) {
        entries = [...new Set(req.entryIds)].map((id) => {
          const e = entry(id);
          if (e === undefined) throw notFound(`entry "${id}"`);
          return e;
        });
        entries.sort((a, b) => (a.seq < b.seq ? -1 : 1));
      } else {
        const after = BigInt(req.afterSeq ?? 0);
        const limit = req.limit || 1000;
        entries = [];
        for (const json of data.entries) {
          if (entries.length >= limit) break;
          const e = entry((json as { id: string }).id) as Entry;
          if (e.seq > after) entries.push(e);
        }
      }
      return create(GetEntriesResponseSchema, { entries, headSeq });
    },
    async getState(
      req: Req & {
        atEntryId?: string;
        view?: View;
        pageSize?: number;
        pageToken?: string;
        fromEnd?: boolean;
      },
    ) {
      check(req);
      const view = req.view === View.HISTORY ? View.HISTORY : View.CONTEXT;
      const state = fold(req.atEntryId ?? data.leafId, view);
      const total = state.messages.length;
      const size = req.pageSize || total;
      const cursor = req.pageToken ? Number(req.pageToken) : undefined;
      let start: number;
      let end: number;
      if (req.fromEnd) {
        end = cursor ?? total;
        start = Math.max(0, end - size);
      } else {
        start = cursor ?? 0;
        end = Math.min(total, start + size);
      }
      const more = req.fromEnd ? start > 0 : end < total;
      return create(GetStateResponseSchema, {
        state: { ...state, messages: state.messages.slice(start, end) },
        nextPageToken: more ? String(req.fromEnd ? start : end) : "",
        messageCount: BigInt(total),
      });
    },
    watchEntries(req: Req, options?: { signal?: AbortSignal }) {
      check(req);
      return quiet(options?.signal);
    },
    async getUsage(req: Req) {
      check(req);
      const all = data.entries.map((json) => entry((json as { id: string }).id) as Entry);
      return usageOfEntries(meta.id, all, data.leafId);
    },
  };

  const store = {
    async getSession(req: Req) {
      check(req);
      return create(GetSessionResponseSchema, { session: meta });
    },
    async listSessions(req: Req & { parentSessionId?: string }) {
      check({ workspace: req.workspace });
      // Subagent sessions are not part of the export.
      const sessions = req.parentSessionId ? [] : [meta];
      return create(ListSessionsResponseSchema, { sessions });
    },
    async listWorkspaces() {
      return create(ListWorkspacesResponseSchema, {
        workspaces: [
          {
            name: data.workspace,
            sessionCount: meta.parentSessionId === undefined ? 1n : 0n,
            subagentSessionCount: meta.parentSessionId === undefined ? 0n : 1n,
          },
        ],
      });
    },
    async *getBlob(req: Req & { sha256: string }) {
      check({ workspace: req.workspace });
      const text = data.blobs[req.sha256];
      if (text === undefined) {
        const size = data.omittedBlobs[req.sha256];
        throw size === undefined
          ? notFound(`blob ${req.sha256}`)
          : new ConnectError(
              data.omittedWhy === undefined
                ? `blob ${req.sha256} (${size} bytes) is not in this export: it was larger than --max-inline-bytes ${data.maxInlineBytes}`
                : `blob ${req.sha256} (${size} bytes) is not in this page: ${data.omittedWhy}`,
              Code.NotFound,
            );
      }
      const bytes = decodeBase64(text);
      yield create(GetBlobResponseSchema, { data: bytes, offset: 0n, size: BigInt(bytes.length) });
    },
    watchSessions(_req: Req, options?: { signal?: AbortSignal }) {
      return quiet(options?.signal);
    },
  };

  const unavailable = (service: string, impl: object) =>
    new Proxy(impl, {
      get(target, name) {
        if (name in target) return target[name as keyof typeof target];
        return async () => {
          throw new ConnectError(
            `${service}.${String(name)} is not available in an exported page`,
            Code.Unimplemented,
          );
        };
      },
    });
  return {
    session: unavailable("SessionService", session),
    store: unavailable("StoreService", store),
  } as unknown as SessiondClient;
}

/**
 * The export's client when this page is an export (the data element is
 * there), else undefined. An export opened without a link to a session
 * starts at its session.
 */
export function exportedClient(): SessiondClient | undefined {
  const el = document.getElementById(EXPORT_DATA_ID);
  if (el === null || el.getAttribute("type") !== "application/json") return undefined;
  const data = JSON.parse(el.textContent ?? "") as ExportData;
  const client = staticClient(data);
  const id = (data.session as { id?: string }).id ?? "";
  if (location.hash === "" || location.hash === "#" || location.hash === "#/") {
    const at = data.leafId === "" ? undefined : data.leafId;
    history.replaceState(null, "", sessionHash(data.workspace, id, at));
  }
  return client;
}
