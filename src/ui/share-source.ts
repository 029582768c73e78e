import { type JsonValue, toJson } from "@bufbuild/protobuf";
import {
  createSessiondClient,
  type Entry,
  EntrySchema,
  entryKind,
  entryPreview,
  Role,
  type SessiondClient,
  type SessionMeta,
  SessionMetaSchema,
  type Share,
  TreeNodeSchema,
} from "../web/index.js";
import { type ExportData, staticClient } from "./static-source.js";

/**
 * A share link's page (/share/<token>, served by the server without the
 * workspace's token): the snapshot read with ReadShare, page by page, then
 * answered to the viewer by the static client an HTML export uses
 * (static-source.ts), so the viewer's rendering is the same and nothing
 * but the snapshot is ever asked of the server.
 */

/** The share token of a /share/<token> path, or undefined on any other page. */
export function shareTokenOf(pathname: string): string | undefined {
  const m = /^\/share\/([A-Za-z0-9_-]{1,128})\/?$/.exec(pathname);
  return m === null ? undefined : m[1];
}

export interface LoadedShare {
  readonly client: SessiondClient;
  readonly share: Share;
  readonly meta: SessionMeta;
}

/** Reads a share's snapshot (every page) with a client that sends no token. */
export async function loadShare(token: string): Promise<LoadedShare> {
  const remote = createSessiondClient({
    baseUrl: location.origin,
    timeoutMs: 30_000,
    retry: { maxAttempts: 2 },
    blobs: "refs",
  });
  const entries: Entry[] = [];
  let share: Share | undefined;
  let title = "";
  let pageToken = "";
  do {
    const page = await remote.store.readShare({ token, pageToken });
    entries.push(...page.entries);
    share ??= page.share;
    title = page.title;
    pageToken = page.nextPageToken;
  } while (pageToken !== "");
  if (share === undefined || entries.length === 0) throw new Error("the share answered no entries");
  return snapshotClient(share, title, entries);
}

/** The static client over a snapshot: one session, the path's entries only. */
export function snapshotClient(
  share: Share,
  title: string,
  entries: readonly Entry[],
): LoadedShare {
  const root = entries[0] as Entry;
  const last = entries[entries.length - 1] as Entry;
  const info = root.kind.case === "sessionInfo" ? root.kind.value : undefined;
  const meta: SessionMeta = {
    $typeName: "sessiond.v1.SessionMeta",
    id: share.sessionId,
    workspace: share.workspace,
    title: title === "" ? undefined : title,
    createdAt: info?.createdAt ?? root.timestamp,
    updatedAt: last.timestamp,
    entryCount: BigInt(entries.length),
    messageCount: BigInt(entries.filter((e) => e.kind.case === "message").length),
    leafId: share.entryId,
    headSeq: last.seq,
    spawnDepth: 0,
    health: 0,
    healthDetail: "",
    tags: { ...(info?.tags ?? {}) },
  };
  const blobs: Record<string, string> = {};
  const omitted: Record<string, string> = {};
  for (const e of entries) {
    if (e.kind.case !== "message") continue;
    for (const p of e.kind.value.content) {
      if (p.part.case === "blob") omitted[p.part.value.sha256] = String(p.part.value.size);
    }
  }
  const data: ExportData = {
    format: "sessiond-export/1",
    workspace: share.workspace,
    session: toJson(SessionMetaSchema, meta),
    leafId: share.entryId,
    headSeq: String(last.seq),
    nodes: entries.map((e) =>
      toJson(TreeNodeSchema, {
        $typeName: "sessiond.v1.TreeNode",
        id: e.id,
        parentId: e.parentId,
        kind: entryKind(e),
        seq: e.seq,
        label: e.kind.case === "label" ? e.kind.value.label : undefined,
        onCurrentPath: true,
        role: e.kind.case === "message" ? e.kind.value.role : Role.UNSPECIFIED,
        preview: entryPreview(e),
        timestamp: e.timestamp,
      }),
    ),
    entries: entries.map((e) => toJson(EntrySchema, e) as JsonValue),
    blobs,
    omittedBlobs: omitted,
    maxInlineBytes: 0,
    omittedWhy: "a share carries parts up to half the server's largest message only",
  };
  return { client: staticClient(data), share, meta };
}
