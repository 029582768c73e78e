import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { Role, WithheldReason } from "../../../gen/sessiond/v1/entry_pb.js";
import { View } from "../../../gen/sessiond/v1/session_pb.js";
import { assistant, toolResult, user } from "../../../test/support/fixtures.js";
import { fileOf, keyOf } from "../../../test/support/jsonl/fixtures.js";
import { sealedTestDirs } from "../../../test/support/jsonl/sealed-dirs.js";
import { textOf } from "../../core/message-text.js";
import { SessionStore } from "../../store/session-store.js";
import { JsonlEngine } from "./jsonl-engine.js";
import { keyPath } from "./session-keys.js";

/**
 * An erased sealed session keeps what erasure keeps of an entry in clear
 * (core/withheld.ts): a message's role, tool call ids and names, tool
 * result's tool_call_id, so CONTEXT after erasure still pairs tool calls
 * with their results. The tombstone that replaces the key holds that
 * structure and no content.
 */

const WS = "sealed";
const SECRETS = ["KEPT-TEST-USER-71aa", "KEPT-TEST-ASSISTANT-72bb", "KEPT-TEST-RESULT-73cc"];

const dirs = sealedTestDirs();

const storeOf = () =>
  new SessionStore(
    new JsonlEngine({
      dataDir: dirs.dataDir,
      encryption: { keys: dirs.keyring, workspaces: [WS] },
    }),
  );

async function secretsOnDisk(): Promise<string[]> {
  const found = new Set<string>();
  for (const name of await readdir(dirs.dataDir, { recursive: true })) {
    const file = path.join(dirs.dataDir, name);
    if (!(await stat(file)).isFile()) continue;
    const bytes = await readFile(file);
    for (const m of SECRETS) if (bytes.includes(m)) found.add(m);
  }
  return [...found];
}

async function contextOf(store: SessionStore) {
  const state = await (await store.open(WS, "s1")).state({ view: View.CONTEXT });
  return state.messages.map((m) => ({
    id: m.entryId,
    role: m.message?.role,
    text: m.message === undefined ? "" : textOf(m),
    calls: (m.message?.content ?? []).flatMap((p) =>
      p.part.case === "toolCall" ? [`${p.part.value.id}:${p.part.value.name}`] : [],
    ),
    toolCallId: m.message?.toolCallId ?? "",
  }));
}

describe("erasure of a sealed session keeps roles and tool-call pairing", () => {
  it("CONTEXT after erasure: same roles, the assistant's tool call and the result's tool_call_id, [erased] text; no content on disk", async () => {
    const store = storeOf();
    await store.create({ workspace: WS, sessionId: "s1" });
    const s = await store.open(WS, "s1");
    await s.append([user("u1", `question ${SECRETS[0]}`)]);
    await s.append([assistant("a1", `calling ${SECRETS[1]}`, ["call-1"])]);
    await s.append([toolResult("t1", "call-1")]);
    await s.append([user("u2", `thanks ${SECRETS[2]}`)]);
    await store.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo", why: "request" });

    const want = [
      { id: "u1", role: Role.USER, text: "[erased]", calls: [], toolCallId: "" },
      { id: "a1", role: Role.ASSISTANT, text: "[erased]", calls: ["call-1:calc"], toolCallId: "" },
      { id: "t1", role: Role.TOOL, text: "[erased]", calls: [], toolCallId: "call-1" },
      { id: "u2", role: Role.USER, text: "[erased]", calls: [], toolCallId: "" },
    ];
    expect(await contextOf(store)).toEqual(want);
    const entries = (await (await store.open(WS, "s1")).entries(0, 10)).entries;
    expect(entries.slice(1).map((e) => e.withheld?.reason)).toEqual(
      Array(4).fill(WithheldReason.ERASED),
    );
    await store.close();

    expect(await secretsOnDisk()).toEqual([]);
    const tombstone = await readFile(keyPath(fileOf(dirs.dataDir, keyOf("s1", WS))), "utf8");
    expect(tombstone).not.toContain('"wrapped"');
    // After a restart, the same.
    const again = storeOf();
    expect(await contextOf(again)).toEqual(want);
    await again.close();
  });

  it("a tombstone written before it kept anything still reads: the entries erased, without roles", async () => {
    const store = storeOf();
    await store.create({ workspace: WS, sessionId: "s1" });
    await (await store.open(WS, "s1")).append([user("u1", `question ${SECRETS[0]}`)]);
    await store.erase({ workspace: WS, sessionIds: ["s1"], by: "dpo", why: "" });
    await store.close();
    const file = keyPath(fileOf(dirs.dataDir, keyOf("s1", WS)));
    const old = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    delete old.kept;
    await writeFile(file, `${JSON.stringify(old)}\n`);
    const again = storeOf();
    const entries = (await (await again.open(WS, "s1")).entries(0, 10)).entries;
    const u1 = entries[1];
    expect(u1?.withheld?.reason).toBe(WithheldReason.ERASED);
    expect(u1?.kind.case === "message" ? u1.kind.value.role : undefined).toBe(Role.UNSPECIFIED);
    await again.close();
  });
});
