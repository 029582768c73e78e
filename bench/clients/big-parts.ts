/**
 * Scenario b (big parts, issue 36), the client side. Args:
 * - {mode:"write", url, turns, transcript}: creates a session and appends
 *   `turns` turns (a user prompt, an assistant answer, a unique tool output
 *   of ~350 KB; every ninth turn a 1 MiB screenshot out of 5, repeated),
 *   and writes the raw transcript (the entries as proto JSON, one per line,
 *   as an export would) to `transcript`. Prints {sessionId, rawBytes,
 *   imageBytes, entries}.
 * - {mode:"append1mb", url, n}: appends `n` entries of one unique 1 MiB
 *   image each, one after another, timing each. Prints {samples}.
 * - {mode:"echo1mb", url, n}: the transport floor of that append: `n`
 *   calls of the echo baseline carrying the same 1 MiB, timing each.
 *   Prints {samples}.
 * - {mode:"read", url, sessionId}: reads the whole state as an adapter
 *   resuming does (GetState pages, every blob resolved with GetBlob).
 *   Prints {ms, messages, bytes}.
 */
import { writeFileSync } from "node:fs";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { EntrySchema, Role } from "../../gen/sessiond/v1/entry_pb.js";
import { readState } from "../../src/client/index.js";
import { answer, args, echo, sessiond, timed } from "./data-common.js";

const a = args<{
  mode: "write" | "append1mb" | "echo1mb" | "read";
  url: string;
  turns?: number;
  transcript?: string;
  n?: number;
  sessionId?: string;
}>();
const c = a.mode === "echo1mb" ? undefined : sessiond(a.url);
const MiB = 1024 * 1024;

function image(seed: number): Uint8Array {
  const data = new Uint8Array(MiB);
  let x = seed * 2654435761;
  for (let i = 0; i < data.length; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    data[i] = x & 0xff;
    data[i + 1] = (x >>> 8) & 0xff;
    data[i + 2] = (x >>> 16) & 0xff;
    data[i + 3] = x >>> 24;
  }
  return data;
}

function msg(id: string, role: Role, parts: { text?: string; image?: Uint8Array }[]) {
  return create(EntrySchema, {
    id,
    kind: {
      case: "message",
      value: {
        role,
        content: parts.map((p) =>
          p.image !== undefined
            ? { part: { case: "image" as const, value: { mimeType: "image/png", data: p.image } } }
            : { part: { case: "text" as const, value: p.text ?? "" } },
        ),
      },
    },
  });
}

if (a.mode === "echo1mb") {
  const e = echo(a.url);
  const samples: number[] = [];
  for (let i = 0; i < (a.n ?? 30) + 3; i++) {
    // The bytes the Append carries (an entry around the image), answered by a few bytes.
    const payload = toBinary(EntrySchema, msg(`img${i}`, Role.USER, [{ image: image(1000 + i) }]));
    const { ms } = await timed(() => e.echo({ payload, responseBytes: 16 }));
    if (i >= 3) samples.push(ms);
  }
  answer({ samples });
}

if (c !== undefined && a.mode === "write") {
  const { session } = await c.store.createSession({ title: "big parts" });
  const sessionId = session?.id ?? "";
  const shots = Array.from({ length: 5 }, (_, i) => image(i + 1));
  const lines: string[] = [];
  let imageBytes = 0;
  for (let t = 0; t < (a.turns ?? 200); t++) {
    const output = Array.from(
      { length: 10_000 },
      (_, k) => `turn ${t} line ${k}: ${(t * 7919 + k * 104729).toString(36)} ok`,
    ).join("\n");
    const entries = [
      msg(`u${t}`, Role.USER, [{ text: `step ${t}: run the tests and show me the screen` }]),
      msg(`a${t}`, Role.ASSISTANT, [{ text: `Running step ${t}.` }]),
      msg(`o${t}`, Role.USER, [{ text: output }]),
    ];
    if (t % 9 === 0) {
      entries.push(msg(`s${t}`, Role.USER, [{ image: shots[(t / 9) % 5] as Uint8Array }]));
      imageBytes += MiB;
    }
    await c.session.append({ session: sessionId, entries });
    for (const e of entries) lines.push(toJsonString(EntrySchema, e));
  }
  const raw = `${lines.join("\n")}\n`;
  writeFileSync(a.transcript as string, raw);
  answer({ sessionId, rawBytes: Buffer.byteLength(raw), imageBytes, entries: lines.length });
}

if (c !== undefined && a.mode === "append1mb") {
  const { session } = await c.store.createSession({ title: "1 MiB appends" });
  const samples: number[] = [];
  for (let i = 0; i < (a.n ?? 30) + 3; i++) {
    const e = msg(`img${i}`, Role.USER, [{ image: image(1000 + i) }]);
    const { ms } = await timed(() =>
      c.session.append({ session: session?.id ?? "", entries: [e] }),
    );
    if (i >= 3) samples.push(ms); // the first three warm the path up
  }
  answer({ samples });
}

if (c !== undefined && a.mode === "read") {
  await c.health.check({ service: "" });
  const { ms, value } = await timed(() => readState(c, { session: a.sessionId as string }));
  let bytes = 0;
  for (const m of value.state?.messages ?? []) {
    for (const p of m.message?.content ?? []) {
      if (p.part.case === "text") bytes += p.part.value.length;
      if (p.part.case === "image") bytes += p.part.value.data.length;
      if (p.part.case === "blob") throw new Error("a reference was left unresolved");
    }
  }
  answer({ ms, messages: value.state?.messages.length ?? 0, bytes });
}
