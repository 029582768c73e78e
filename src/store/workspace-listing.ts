/**
 * Listing the workspaces that hold sessions (ListWorkspaces): the page
 * size and token rules over the engine's `workspacePage`, keyset on the
 * name, so that workspaces appearing or emptied between two calls never
 * make a page repeat or skip one that was there throughout.
 */

import { WORKSPACE_PATTERN } from "../core/ids.js";
import type { StorageEngine, WorkspaceRecord } from "../storage/engine.js";
import { listPageSize, type StoreLimits } from "./limits.js";
import { badPageToken, decodeToken, encodeToken } from "./page-token.js";

export interface WorkspaceListInput {
  pageSize?: number | undefined;
  pageToken?: string | undefined;
  /** Only these workspaces (what a caller's token may use); unset: every one. */
  only?: ReadonlySet<string> | undefined;
}

/** A page of workspaces, by name. */
export interface WorkspaceListPage {
  workspaces: WorkspaceRecord[];
  /** Empty on the last page. */
  nextPageToken: string;
}

const TAG = "workspaces";

function decodeWorkspaceToken(token: string): string {
  const fields = decodeToken(token);
  const [tag, name] = fields;
  if (
    fields.length !== 2 ||
    tag !== TAG ||
    typeof name !== "string" ||
    !WORKSPACE_PATTERN.test(name)
  ) {
    throw badPageToken();
  }
  return name;
}

/** One page of the workspaces that hold at least one session, with their counts. */
export async function listWorkspaces(
  engine: StorageEngine,
  limits: StoreLimits,
  input: WorkspaceListInput,
): Promise<WorkspaceListPage> {
  const pageSize = listPageSize(input.pageSize, limits);
  const after = input.pageToken ? decodeWorkspaceToken(input.pageToken) : "";
  // One more than the page: whether there is a next page.
  const found = await engine.workspacePage({ after, limit: pageSize + 1, only: input.only });
  const workspaces = found.slice(0, pageSize);
  const last = workspaces[workspaces.length - 1];
  return {
    workspaces,
    nextPageToken:
      found.length > pageSize && last !== undefined ? encodeToken([TAG, last.name]) : "",
  };
}
