import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type JsonValue, toJson } from "@bufbuild/protobuf";
import {
  type BlobRef,
  EntrySchema,
  type SessiondClient,
  SessionMetaSchema,
  TreeNodeSchema,
} from "../client/index.js";
import { blobRefsOf } from "../core/blob-parts.js";
import { CliError } from "./command.js";
import type { SessionSnapshot } from "./export-read.js";

/**
 * `sessiond export --format html`: one self-contained page that shows a
 * session in the web viewer's own rendering, opened from a file with no
 * network at all. The page holds the viewer's built script and stylesheet
 * (`npm run build` writes them to dist/ui; scripts/build-ui.mjs) inline,
 * the session as JSON in a `<script type="application/json">` element
 * (src/ui/static-source.ts answers the viewer's calls from it), the bytes
 * of the blobs its entries name up to --max-inline-bytes each, and a
 * Content-Security-Policy that allows the two inline blocks by their hash
 * and nothing else: no connection, no remote script, style, image, font or
 * frame.
 */

/** The id static-source.ts reads (EXPORT_DATA_ID there). */
const DATA_ID = "sessiond-export";

export const DEFAULT_MAX_INLINE_BYTES = 4 * 1024 * 1024;

export interface HtmlExportOptions {
  /** Blobs larger than this stay out (the page shows their preview and says so). */
  readonly maxInlineBytes: number;
  /** The built viewer (index.html, its script and stylesheet). */
  readonly uiDir: string;
}

/** The built viewer's script and stylesheet, as index.html names them. */
function viewerAssets(uiDir: string): { script: string; style: string } {
  let index: string;
  try {
    index = readFileSync(join(uiDir, "index.html"), "utf8");
  } catch {
    throw new CliError(
      `the web viewer is not built (no ${join(uiDir, "index.html")}): run \`npm run build\`, or name a built viewer with --ui-dir`,
    );
  }
  const script = /<script type="module" src="([^"/]+\.js)"><\/script>/.exec(index)?.[1];
  const style = /<link rel="stylesheet" href="([^"/]+\.css)" \/>/.exec(index)?.[1];
  if (script === undefined || style === undefined) {
    throw new CliError(`${join(uiDir, "index.html")} does not name the viewer's script and style`);
  }
  return {
    script: readFileSync(join(uiDir, script), "utf8"),
    style: readFileSync(join(uiDir, style), "utf8"),
  };
}

/**
 * JSON that no text inside can end the element it sits in: `<`, `>` and
 * `&` (which could close the script or open a comment) and U+2028 / U+2029
 * as \u escapes. They occur only inside JSON strings, where the escape
 * means the same character to JSON.parse.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/**
 * A script for an inline element: `<!--`, `<script` and `</script` (which
 * the HTML parser acts on inside a script element) written with `\x3C` for
 * the `<`. In the minified bundle they occur only in string and regular
 * expression literals, where `\x3C` is the same character.
 */
export function inlineScript(js: string): string {
  return js.replace(/<(!--|\/?script)/gi, "\\x3C$1");
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

const hashOf = (text: string) =>
  `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** What the export's page hides of the live viewer: its live follow and the token. */
const EXPORT_CSS = `
#auth, #live, .tree-bar label { display: none; }
.export-note { margin-left: auto; font-size: 0.85em; }
`;

/** The blobs the entries name: the bytes of those up to the limit, the size of the rest. */
async function readBlobs(
  client: SessiondClient,
  workspace: string,
  snap: SessionSnapshot,
  maxInlineBytes: number,
): Promise<{ blobs: Record<string, string>; omitted: Record<string, string> }> {
  const refs = new Map<string, BlobRef>();
  for (const e of snap.entries) for (const r of blobRefsOf(e)) refs.set(r.sha256, r);
  const blobs: Record<string, string> = {};
  const omitted: Record<string, string> = {};
  for (const ref of [...refs.values()].sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1))) {
    if (ref.size > BigInt(maxInlineBytes)) {
      omitted[ref.sha256] = String(ref.size);
      continue;
    }
    const data = Buffer.alloc(Number(ref.size));
    let at = 0;
    for await (const chunk of client.store.getBlob({ workspace, sha256: ref.sha256 })) {
      data.set(chunk.data, Number(chunk.offset));
      at += chunk.data.length;
    }
    if (at !== data.length) {
      throw new CliError(`blob ${ref.sha256}: read ${at} bytes, the reference says ${ref.size}`);
    }
    blobs[ref.sha256] = data.toString("base64");
  }
  return { blobs, omitted };
}

/** The page: deterministic for a given session, viewer build and limit. */
export async function exportHtml(
  client: SessiondClient,
  workspace: string,
  snap: SessionSnapshot,
  opts: HtmlExportOptions,
): Promise<string> {
  const assets = viewerAssets(opts.uiDir);
  const { blobs, omitted } = await readBlobs(client, workspace, snap, opts.maxInlineBytes);
  const data = {
    format: "sessiond-export/1",
    workspace: snap.meta.workspace || workspace,
    session: toJson(SessionMetaSchema, snap.meta) as JsonValue,
    leafId: snap.leafId,
    headSeq: String(snap.headSeq),
    nodes: snap.nodes.map((n) => toJson(TreeNodeSchema, n)),
    entries: snap.entries.map((e) => toJson(EntrySchema, e)),
    blobs,
    omittedBlobs: omitted,
    maxInlineBytes: opts.maxInlineBytes,
  };
  const script = inlineScript(assets.script);
  const style = `${assets.style}\n${EXPORT_CSS}`;
  if (/<\/style/i.test(style)) throw new CliError("the viewer's stylesheet cannot be inlined");
  const csp = [
    "default-src 'none'",
    `script-src ${hashOf(script)}`,
    `style-src ${hashOf(style)}`,
    "img-src blob: data:",
    "connect-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const title = snap.meta.title ?? snap.meta.id;
  const omittedCount = Object.keys(omitted).length;
  const note =
    `export of session ${snap.meta.id} · read-only, offline` +
    (omittedCount > 0
      ? ` · ${omittedCount} blob${omittedCount === 1 ? "" : "s"} over ${opts.maxInlineBytes} bytes left out`
      : "");
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="${csp}" />
    <meta name="referrer" content="no-referrer" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="generator" content="sessiond export" />
    <title>${escapeHtml(title)} · sessiond</title>
    <style>${style}</style>
    <script type="application/json" id="${DATA_ID}">${scriptJson(data)}</script>
    <script type="module">${script}</script>
  </head>
  <body>
    <header id="top">
      <a href="#/" class="brand">sessiond</a>
      <span id="crumbs"></span>
      <span id="auth"></span>
      <span class="export-note muted">${escapeHtml(note)}</span>
    </header>
    <main id="app"><p class="muted">Loading…</p></main>
  </body>
</html>
`;
}
