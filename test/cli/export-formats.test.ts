import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EntrySchema } from "../../gen/sessiond/v1/entry_pb.js";
import {
  assistantMessage,
  createSessiondClient,
  type SessiondClient,
  toolResult,
  userMessage,
} from "../../src/client/index.js";
import { blobPreview } from "../../src/core/blob-parts.js";
import { runCli as sessiond } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond export --format jsonl|markdown|html` (issue 42): jsonl is the
 * default and the same bytes with or without the flag, and import reads it
 * back to an equal session; markdown is a transcript of one path with a
 * fixed structure (checked whole against a golden text, times masked);
 * html holds the session's entries as data, the blobs up to the limit, and
 * says how to build the viewer when it is missing.
 */

let from: SessiondProcess;
let to: SessiondProcess;
let source: SessiondClient;
let target: SessiondClient;
const dir = mkdtempSync(join(tmpdir(), "sessiond-export-formats-"));
const SESSION = "export-formats";
const BIG = Array.from({ length: 6000 }, (_, i) => `row ${i} of the table`).join("\n");
const BIG_SHA = createHash("sha256").update(BIG).digest("hex");
let uiDir: string;

beforeAll(async () => {
  [from, to] = await Promise.all([startSessiond(), startSessiond()]);
  source = createSessiondClient({ baseUrl: from.url });
  target = createSessiondClient({ baseUrl: to.url });
  await source.store.createSession({
    sessionId: SESSION,
    title: "Parser fix",
    tags: { user: "ana", repo: "acme/api" },
  });
  await source.session.append({
    session: SESSION,
    entries: [
      { ...userMessage("Why does `parse` fail on a trailing comma?"), id: "u1" },
      {
        ...assistantMessage("Let me look.", {
          thinking: "Probably the lexer.",
          toolCalls: [{ id: "call1", name: "read_file", args: { path: "src/parse.ts" } }],
          model: "m1",
          provider: "p1",
        }),
        id: "a1",
      },
      {
        ...toolResult("call1", "const s = ```not a fence```;\n# not a heading", {
          toolName: "read_file",
        }),
        id: "t1",
      },
      { ...assistantMessage("The **lexer** drops the comma."), id: "a2" },
      { ...userMessage(BIG), id: "big" },
      { id: "l1", kind: { case: "label", value: { label: "found" } } },
      { ...userMessage("Or is it the grammar?"), id: "ub" },
    ],
  });
  await source.session.rewind({ session: SESSION, target: "l1" });
  await source.session.append({
    session: SESSION,
    entries: [
      {
        id: "c1",
        kind: {
          case: "compaction",
          value: {
            summary: "The lexer drops trailing commas.",
            replacesEntryIds: ["u1", "a1", "t1"],
          },
        },
      },
      { ...userMessage("Thanks, fix it."), id: "u3" },
    ],
  });
  uiDir = join(dir, "ui");
  const { buildUi } = (await import("../../scripts/build-ui.mjs")) as {
    buildUi(dir: string): Promise<string[]>;
  };
  await buildUi(uiDir);
}, 120_000);

afterAll(async () => {
  await Promise.all([from?.stop(), to?.stop()]);
  await Promise.all([removeDataDir(from.dataDir), removeDataDir(to.dataDir)]);
  rmSync(dir, { recursive: true, force: true });
});

const exportAs = (...args: string[]) =>
  sessiond(["export", SESSION, "--server", from.url, ...args], { timeoutMs: 60_000 });

/** Every entry of a session, page by page. */
async function log(c: SessiondClient, id: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (;;) {
    const page = await c.session.getEntries({ session: id, afterSeq: BigInt(out.length) });
    if (page.entries.length === 0) return out;
    out.push(...page.entries.map((e) => toJson(EntrySchema, e)));
  }
}

/** The root entry's id and the times vary by run: masked. */
function masked(text: string, rootId: string): string {
  return text.replaceAll(rootId, "ROOT").replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "TIME");
}

async function rootId(): Promise<string> {
  const page = await source.session.getEntries({ session: SESSION, afterSeq: 0n, limit: 1 });
  return page.entries[0]?.id as string;
}

describe("sessiond export --format", () => {
  it("jsonl is the default: the same bytes with and without the flag, and import reads it back equal", async () => {
    const plain = await exportAs();
    const flagged = await exportAs("--format", "jsonl");
    expect(plain.code).toBe(0);
    expect(flagged.code).toBe(0);
    expect(flagged.stdout).toBe(plain.stdout);
    const lines = plain.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(11);
    // One Entry per line, as GetEntries answers it with the blob put back.
    expect(lines.map((l) => JSON.parse(l))).toEqual(await log(source, SESSION));
    const file = join(dir, "session.jsonl");
    writeFileSync(file, flagged.stdout);
    const imported = await sessiond(["import", file, "--server", to.url]);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(await log(target, SESSION)).toEqual(await log(source, SESSION));
  });

  it("markdown is a transcript of the current path: roles as headings, tool calls and results fenced, blobs by hash and preview", async () => {
    const res = await exportAs("--format", "markdown");
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const root = await rootId();
    expect(masked(res.stdout, root)).toBe(
      [
        "# Parser fix",
        "",
        "- Session: `export-formats` in workspace `default`",
        "- Created: TIME",
        "- Tags: `repo=acme/api`, `user=ana`",
        "- Path: 9 entries, `ROOT` to `u3` (the current leaf)",
        "",
        "## User",
        "",
        "_`u1` · TIME_",
        "",
        "Why does `parse` fail on a trailing comma?",
        "",
        "## Assistant",
        "",
        "_`a1` · p1/m1 · TIME_",
        "",
        "Let me look.",
        "",
        "**Tool call** `read_file` · `call1`",
        "",
        "```json",
        "{",
        '  "path": "src/parse.ts"',
        "}",
        "```",
        "",
        "## Tool result · read_file",
        "",
        "_`t1` · call `call1` · TIME_",
        "",
        "````text",
        "const s = ```not a fence```;",
        "# not a heading",
        "````",
        "",
        "## Assistant",
        "",
        "_`a2` · TIME_",
        "",
        "The **lexer** drops the comma.",
        "",
        "## User",
        "",
        "_`big` · TIME_",
        "",
        `_[text blob text/plain; charset=utf-8, ${Buffer.byteLength(BIG)} bytes, sha256 ${BIG_SHA}]_ preview:`,
        "",
        "```text",
        blobPreview(BIG),
        "```",
        "",
        "_Label: `found`_ (`l1`)",
        "",
        "## Compaction",
        "",
        "_`c1` · replaces 3 entries · TIME_",
        "",
        "The lexer drops trailing commas.",
        "",
        "## User",
        "",
        "_`u3` · TIME_",
        "",
        "Thanks, fix it.",
        "",
      ].join("\n"),
    );
    // The same session gives the same text.
    expect((await exportAs("--format", "markdown")).stdout).toBe(res.stdout);
  });

  it("markdown: --thinking adds the thinking, --leaf picks another branch's path", async () => {
    const thinking = await exportAs("--format", "markdown", "--thinking");
    expect(thinking.code).toBe(0);
    expect(thinking.stdout).toContain(
      "_`a1` · p1/m1 · TIME_\n\n**Thinking**\n\n```text\nProbably the lexer.\n```\n\nLet me look.".replace(
        "TIME",
        /_`a1` · p1\/m1 · (\S+)_/.exec(thinking.stdout)?.[1] as string,
      ),
    );
    expect((await exportAs("--format", "markdown")).stdout).not.toContain("Probably the lexer.");

    const branch = await exportAs("--format", "markdown", "--leaf", "ub");
    expect(branch.code).toBe(0);
    const headings = branch.stdout.split("\n").filter((l) => l.startsWith("## "));
    expect(headings).toEqual([
      "## User",
      "## Assistant",
      "## Tool result · read_file",
      "## Assistant",
      "## User",
      "## User",
    ]);
    expect(branch.stdout).toContain("Or is it the grammar?");
    expect(branch.stdout).not.toContain("Thanks, fix it.");
    expect(branch.stdout).toContain("to `ub`\n");
  });

  it("markdown: an entry not in the session, or a flag of another format, is refused naming it", async () => {
    const missing = await exportAs("--format", "markdown", "--leaf", "nope");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('entry "nope" is not in session "export-formats"');
    const wrong = await exportAs("--format", "html", "--thinking");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--thinking goes with --format markdown");
    const format = await exportAs("--format", "pdf");
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be jsonl, html or markdown, got "pdf"');
  });

  it("html holds every entry as data, the blobs up to --max-inline-bytes, and no reference outside the page", async () => {
    const res = await exportAs("--format", "html", "--ui-dir", uiDir);
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    const page = res.stdout;
    // Outside the inline script and style (the bundle's libraries name namespaces
    // like http://www.w3.org/...), the page names nothing to load.
    const markup = page
      .replace(/<script[^>]*>[\s\S]*?<\/script>/g, "<script></script>")
      .replace(/<style>[\s\S]*?<\/style>/g, "<style></style>");
    expect(markup).not.toMatch(/ src=| href=(?!"#\/")|https?:|url\(/i);
    expect(markup.match(/<script/g)).toHaveLength(2);
    const json = /<script type="application\/json" id="sessiond-export">([^<]*)<\/script>/.exec(
      page,
    )?.[1];
    const data = JSON.parse(json as string) as {
      entries: unknown[];
      leafId: string;
      blobs: Record<string, string>;
      omittedBlobs: Record<string, string>;
    };
    expect(data.leafId).toBe("u3");
    // The entries as the server holds them: the big text as its reference.
    const refs = createSessiondClient({ baseUrl: from.url, blobs: "refs" });
    expect(data.entries).toEqual(await log(refs, SESSION));
    expect(Buffer.from(data.blobs[BIG_SHA] as string, "base64").toString()).toBe(BIG);
    expect(data.omittedBlobs).toEqual({});

    const small = await exportAs(
      "--format",
      "html",
      "--ui-dir",
      uiDir,
      "--max-inline-bytes",
      "1000",
    );
    expect(small.code).toBe(0);
    const smallData = JSON.parse(
      /id="sessiond-export">([^<]*)<\/script>/.exec(small.stdout)?.[1] as string,
    ) as { blobs: Record<string, string>; omittedBlobs: Record<string, string> };
    expect(smallData.blobs).toEqual({});
    expect(smallData.omittedBlobs).toEqual({ [BIG_SHA]: String(Buffer.byteLength(BIG)) });
    expect(small.stdout).toContain("1 blob over 1000 bytes left out");
  });

  it("html without --ui-dir embeds the viewer of the code that runs (a checkout's sources: built from them)", async () => {
    const res = await exportAs("--format", "html");
    expect(res.stderr).toBe("");
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('<script type="application/json" id="sessiond-export">');
    expect(res.stdout).toMatch(/<script type="module">.{100000,}<\/script>/s);
  });

  it("html with a --ui-dir that holds no built viewer says how to build one", async () => {
    const res = await exportAs("--format", "html", "--ui-dir", join(dir, "no-such-ui"));
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("the web viewer is not built");
    expect(res.stderr).toContain("npm run build");
    expect(res.stdout).toBe("");
  });
});
