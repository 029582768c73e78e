import type { JsonObject } from "@bufbuild/protobuf";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { SessiondSaver, threadSessionId } from "../../src/adapters/langgraph/index.js";
import type { EntryInit, SessiondClient } from "../../src/client/index.js";
import { customEntry } from "../../src/core/entry-builders.js";
import { buildGraph } from "../adapters/langgraph-graph.js";
import { serveDir } from "../adapters/support.js";
import {
  CHROMIUM,
  noChromium,
  screenshotPath,
  type ViewerServer,
  viewerFixture,
} from "./viewer-harness.js";

/**
 * Issue 43, item 4: the viewer shows a LangGraph thread as its checkpoint
 * tree. A thread written by `sessiond/langgraph` under LangGraph JS (a
 * scripted model, a tool, an interrupt, then a time-travel fork from a past
 * checkpoint), a session holding entries of the Python saver's shape
 * (`sessiond.langgraph`, written here with the TS client as that saver
 * writes them), and a Custom entry in the checkpoint namespace whose data
 * is neither shape.
 */

const WS = "lg";
const THREAD = "thread-ts-1";
/** The fork's question: markup in it must stay text in the pane. */
const FORK_QUESTION = "add 10 and 20 <b>bold</b><img src=x>";

interface Expected {
  id: string;
  step: number;
  source: string;
  parent: string | undefined;
}

/** LangGraph's own view of the thread (getStateHistory), checkpoint by checkpoint. */
const history: Expected[] = [];
/** The fork: the past checkpoint it starts from and its first checkpoint. */
let forkFrom = "";
let forkFirst = "";
/** Channel versions of the fork's first checkpoint, read back by the saver. */
let forkVersions: Record<string, string> = {};
let inputCheckpoint = "";

async function runGraph(client: SessiondClient): Promise<void> {
  const saver = new SessiondSaver({ client, workspace: WS });
  const graph = buildGraph(saver);
  const config = { configurable: { thread_id: THREAD } };
  await graph.invoke(
    { messages: [new HumanMessage({ id: "h1", content: "add 2 and 3" })] },
    config,
  );
  await graph.invoke(new Command({ resume: "approved" }), config);
  const before = [];
  for await (const s of graph.getStateHistory(config)) before.push(s);
  const past = before.find((s) => s.next.includes("model") && s.metadata?.step === 0);
  if (past === undefined) throw new Error("no checkpoint before the model");
  forkFrom = String(past.config.configurable?.checkpoint_id);
  const forkConfig = await graph.updateState(past.config, {
    messages: [new HumanMessage({ id: "h1", content: FORK_QUESTION })],
  });
  forkFirst = String(forkConfig.configurable?.checkpoint_id);
  await graph.invoke(null, forkConfig);
  for await (const s of graph.getStateHistory(config)) {
    history.push({
      id: String(s.config.configurable?.checkpoint_id),
      step: s.metadata?.step as number,
      source: s.metadata?.source as string,
      parent: s.parentConfig?.configurable?.checkpoint_id as string | undefined,
    });
  }
  const tuple = await saver.getTuple({
    configurable: { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: forkFirst },
  });
  forkVersions = Object.fromEntries(
    Object.entries(tuple?.checkpoint.channel_versions ?? {}).map(([k, v]) => [k, String(v)]),
  );
  inputCheckpoint = history.find((h) => h.source === "input")?.id ?? "";
}

/** A little msgpack (maps, arrays, strings, small ints, nil): the Python saver's usual bytes. */
function msgpack(v: unknown): number[] {
  if (v === null) return [0xc0];
  if (typeof v === "number") return v >= 0 ? [v] : [0xe0 | (v & 0x1f)];
  if (typeof v === "string") {
    const b = [...new TextEncoder().encode(v)];
    return [0xa0 | b.length, ...b];
  }
  if (Array.isArray(v)) return [0x90 | v.length, ...v.flatMap(msgpack)];
  const entries = Object.entries(v as Record<string, unknown>);
  return [0x80 | entries.length, ...entries.flatMap(([k, x]) => [...msgpack(k), ...msgpack(x)])];
}

/** `{type, b64}`, as the Python saver's typed_to_json keeps msgpack bytes. */
function pyMsgpack(v: unknown): { type: string; b64: string } {
  return { type: "msgpack", b64: Buffer.from(msgpack(v)).toString("base64") };
}

const PY_THREAD = "py-thread-1";
const PY = {
  input: "1f0a0001-0000-6000-bfff-0a1b2c3d4e5f",
  loop: "1f0a0001-0000-6001-8000-112233445566",
  fork: "1f0a0001-0000-6002-8001-aabbccddeeff",
};

/** A Python checkpoint entry: `cp-<id>` under its parent's, fields as langgraph_log.py writes them. */
function pyCheckpoint(
  id: string,
  parent: string | undefined,
  source: string,
  step: number,
  values: JsonObject[],
): EntryInit {
  const metadata = { source, step, parents: {} };
  return customEntry(
    "langgraph.checkpoint",
    {
      checkpoint_id: id,
      parent_checkpoint_id: parent ?? null,
      thread_id: PY_THREAD,
      checkpoint_ns: "",
      source,
      step,
      checkpoint: pyMsgpack({ v: 4, id, channel_versions: {} }),
      metadata: pyMsgpack(metadata),
      values,
    },
    { id: `cp-${id}`, parentId: parent === undefined ? undefined : `cp-${parent}` },
  );
}

async function writePythonShape(client: SessiondClient): Promise<void> {
  await client.store.createSession({
    workspace: WS,
    sessionId: PY_THREAD,
    title: `LangGraph thread ${PY_THREAD}`,
    tags: { "langgraph.kind": "thread", "langgraph.thread": PY_THREAD },
    metadata: { thread_id: PY_THREAD, checkpoint_ns: "" },
  });
  await client.session.append({
    workspace: WS,
    session: PY_THREAD,
    entries: [
      // Under the session's root (the leaf when the first checkpoint is put).
      pyCheckpoint(PY.input, undefined, "input", -1, [
        { channel: "__start__", version: 1, ...pyMsgpack({ messages: [["user", "hi"]] }) },
      ]),
      pyCheckpoint(PY.loop, PY.input, "loop", 0, [
        { channel: "messages", version: 2, ...pyMsgpack([["user", "hi"]]) },
        { channel: "branch:to:agent", version: 2, type: "null" },
      ]),
      customEntry(
        "langgraph.writes",
        {
          checkpoint_id: PY.loop,
          task_id: "5a1c7e1e-1c0b-5b8e-9d9e-0f1e2d3c4b5a",
          task_path: "~__pregel_pull, agent",
          writes: [
            { idx: 0, channel: "messages", ...pyMsgpack([["ai", "hello"]]) },
            { idx: 1, channel: "answer", type: "json", json: '{"answer": 42}' },
          ],
        },
        { id: "w-0123456789abcdef", parentId: `cp-${PY.loop}` },
      ),
      pyCheckpoint(PY.fork, PY.input, "fork", 0, []),
      // Not a saver's: the checkpoint namespace with data of neither shape, on the active path.
      customEntry("langgraph.checkpoint", { note: "made by hand" }, { id: "odd-1" }),
    ],
  });
}

async function seed(dataDir: string): Promise<void> {
  const srv = await serveDir(dataDir);
  try {
    await runGraph(srv.client);
    await writePythonShape(srv.client);
  } finally {
    await srv.close();
  }
}

/** Rows labelled as checkpoints: [title, text of the line]. */
function checkpointRows(page: Page): Promise<[string, string][]> {
  return page
    .locator('#tree .row[data-langgraph="checkpoint"]')
    .evaluateAll((rows) =>
      rows.map((r) => [
        r.getAttribute("title") ?? "",
        r.querySelector(".preview")?.textContent ?? "",
      ]),
    );
}

/**
 * Unfolds every folded branch of the tree (the session is small: every row
 * is drawn). A toggle redraws the rows on the next frame: each click waits
 * for its row to be drawn unfolded before looking for the next fold.
 */
async function unfoldAll(page: Page): Promise<void> {
  const folded = '.fold[aria-expanded="false"]';
  for (let i = 0; i < 50; i++) {
    const rows = page.locator(`#tree .row:has(${folded})`);
    if ((await rows.count()) === 0) return;
    const id = await rows.first().getAttribute("data-id");
    await page.locator(`#tree .row[data-id="${id}"] ${folded}`).click();
    await page
      .locator(`#tree .row[data-id="${id}"] ${folded}`)
      .waitFor({ state: "detached", timeout: 5000 });
  }
}

const short = (id: string) => `…${id.slice(-8)}`;
const label = (h: Expected) => `step ${h.step} · ${h.source} · ${short(h.id)}`;

describe.skipIf(CHROMIUM === undefined)("LangGraph threads in Chromium", () => {
  let browser: Browser;
  let page: Page;
  let server: ViewerServer;

  viewerFixture(seed, async (f) => {
    ({ server, browser } = f);
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  });

  it("a sessiond/langgraph thread: checkpoints by step, source and id, the fork a branch, writes by task and channel", async () => {
    // What the run was: a fork from the step-0 checkpoint by an update.
    expect(history.find((h) => h.id === forkFirst)).toMatchObject({
      source: "update",
      parent: forkFrom,
    });
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${threadSessionId(THREAD)}`);
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.locator(".session-head .langgraph-thread").textContent(), {
        timeout: 10_000,
      })
      .toContain(`thread ${THREAD}`);

    // The active path is the fork, its checkpoints labelled; the first run is
    // a branch off the checkpoint the fork started from, folded at its head.
    const onFork = history.filter((h) => {
      for (let id: string | undefined = history.at(0)?.id; id !== undefined; ) {
        if (id === h.id) return true;
        id = history.find((x) => x.id === id)?.parent;
      }
      return false;
    });
    const firstRun = history.find((h) => h.parent === forkFrom && h.id !== forkFirst);
    if (firstRun === undefined) throw new Error("no first-run child of the fork's checkpoint");
    expect(firstRun.source).toBe("loop");
    const drawn = [...onFork, firstRun];
    await expect.poll(() => checkpointRows(page), { timeout: 10_000 }).toHaveLength(drawn.length);
    expect(new Set(await checkpointRows(page))).toEqual(
      new Set(drawn.map((h) => [`checkpoint ${h.id}`, label(h)])),
    );
    const row = (id: string) => page.locator(`#tree .row[title="checkpoint ${id}"]`);
    const indent = (id: string) =>
      row(id)
        .locator(".indent")
        .evaluate((el) => el.clientWidth);
    expect(await row(forkFrom).locator(".fold").getAttribute("aria-expanded")).toBe("true");
    expect(await row(firstRun.id).locator(".fold").getAttribute("aria-expanded")).toBe("false");
    expect(await indent(forkFirst)).toBe(0);
    expect(await indent(firstRun.id)).toBeGreaterThan(0);

    // Unfolded, every checkpoint of the thread is a labelled row.
    await unfoldAll(page);
    await expect.poll(() => checkpointRows(page), { timeout: 10_000 }).toHaveLength(history.length);
    expect(new Set(await checkpointRows(page))).toEqual(
      new Set(history.map((h) => [`checkpoint ${h.id}`, label(h)])),
    );

    // Pending writes: named by their task (the node) and channels.
    const writes = await page
      .locator('#tree .row[data-langgraph="writes"] .preview')
      .allTextContents();
    expect(writes).toContain(`model → messages, branch:to:tools · of ${short(forkFirst)}`);
    expect(writes.some((w) => w.startsWith("review → __interrupt__ · of "))).toBe(true);
    expect(writes.some((w) => w.startsWith("tools → messages, branch:to:model · of "))).toBe(true);
    // The resume of the interrupt: a Command's write, not a node's.
    expect(writes.some((w) => w.startsWith("command → __resume__ · of "))).toBe(true);
  });

  it("a checkpoint's entry lists its metadata and every channel, stored or inherited, as text", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${threadSessionId(THREAD)}/e/${forkFirst}`);
    const pane = page.locator(`section.langgraph.checkpoint[data-checkpoint="${forkFirst}"]`);
    await pane.waitFor({ timeout: 30_000 });
    const text = (await pane.textContent()) ?? "";
    expect(text).toContain("step 1");
    expect(text).toContain("source update");
    expect(text).toContain(`checkpoint id ${forkFirst}`);
    expect(text).toContain("parents");
    const channels = await pane
      .locator("table.lg-channels tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );
    expect(Object.fromEntries(channels.map(([ch, ver]) => [ch, ver]))).toEqual(forkVersions);
    const byChannel = new Map(channels.map((c) => [c[0], c[2] ?? ""]));
    // __start__ kept the version of the checkpoint before: stored there, not here.
    expect(byChannel.get("__start__")).toBe("unchanged: stored by an earlier checkpoint");
    expect(byChannel.get("branch:to:model")).toBe("null");
    // The new question, in the JSON text it was stored as: markup stays text.
    expect(byChannel.get("messages")).toContain("10 and 20 <b>bold</b><img src=x>");
    expect(await pane.evaluate((el) => el.querySelectorAll("b, img").length)).toBe(0);
    await page.screenshot({ path: screenshotPath("langgraph-thread.png") });

    await page.locator(`#tree .row[title="checkpoint ${inputCheckpoint}"]`).click();
    const input = page.locator(
      `section.langgraph.checkpoint[data-checkpoint="${inputCheckpoint}"]`,
    );
    await input.waitFor();
    const start = (await input.locator("table.lg-channels pre").first().textContent()) ?? "";
    expect(JSON.parse(start).messages[0].kwargs.content).toBe("add 2 and 3");
  });

  it("entries of the Python saver's shape are labelled too: msgpack values as sizes, JSON decoded", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${PY_THREAD}`);
    await page.locator('#tree[data-complete="true"]').waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.locator(".session-head .langgraph-thread").textContent(), {
        timeout: 10_000,
      })
      .toContain(`thread ${PY_THREAD}`);
    await unfoldAll(page);
    await expect.poll(() => checkpointRows(page), { timeout: 10_000 }).toHaveLength(3);
    expect(new Set(await checkpointRows(page))).toEqual(
      new Set([
        [`checkpoint ${PY.input}`, `step -1 · input · ${short(PY.input)}`],
        [`checkpoint ${PY.loop}`, `step 0 · loop · ${short(PY.loop)}`],
        [`checkpoint ${PY.fork}`, `step 0 · fork · ${short(PY.fork)}`],
      ]),
    );
    expect(
      await page.locator('#tree .row[data-langgraph="writes"] .preview').allTextContents(),
    ).toEqual([`agent → messages, answer · of ${short(PY.loop)}`]);

    await page.locator(`#tree .row[title="checkpoint ${PY.loop}"]`).click();
    const pane = page.locator(`section.langgraph.checkpoint[data-checkpoint="${PY.loop}"]`);
    await pane.waitFor();
    const text = (await pane.textContent()) ?? "";
    expect(text).toContain(`thread ${PY_THREAD}`);
    expect(text).toContain("step 0");
    expect(text).toContain("source loop");
    // msgpack metadata: not JSON, so its size.
    expect(text).toMatch(/metadata msgpack, \d+ bytes/);
    const channels = await pane
      .locator("table.lg-channels tbody tr")
      .evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );
    expect(channels).toEqual([
      ["messages", "2", `msgpack, ${msgpack([["user", "hi"]]).length} bytes`],
      ["branch:to:agent", "2", "null, empty"],
    ]);

    await page.locator('#tree .row[data-langgraph="writes"]').click();
    const writes = page.locator("section.langgraph.writes");
    await writes.waitFor();
    const rows = await writes
      .locator("table.lg-writes tbody tr")
      .evaluateAll((rs) =>
        rs.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")),
      );
    expect(rows).toEqual([
      ["agent", "messages", "0", `msgpack, ${msgpack([["ai", "hello"]]).length} bytes`],
      ["agent", "answer", "1", '{"answer":42}'],
    ]);
  });

  it("a Custom entry in the checkpoint namespace of neither shape is drawn as any Custom entry", async () => {
    await page.goto(`${server.url}/ui/#/w/${WS}/s/${PY_THREAD}/e/odd-1`);
    await page.locator('article.entry[data-entry="odd-1"]').waitFor({ timeout: 30_000 });
    // Its row was read in the same GetEntries as the checkpoints drawn with it.
    await page.locator(`#tree .row[title="checkpoint ${PY.fork}"]`).waitFor();
    const row = page.locator('#tree .row[data-id="odd-1"]');
    expect(await row.getAttribute("data-langgraph")).toBeNull();
    expect(await row.locator(".badge").first().textContent()).toBe("custom");
    expect(await row.locator(".preview").textContent()).toBe("langgraph.checkpoint");
    expect(await page.locator("section.langgraph").count()).toBe(0);
    expect(await page.locator("article.entry").textContent()).toContain("made by hand");
  });
});

if (CHROMIUM === undefined) noChromium("LangGraph threads in Chromium");
