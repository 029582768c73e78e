import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient, type SessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * Agent and tool output can hold terminal escape sequences. The CLI's
 * human-readable output must show them as visible text, never pass them to
 * the viewer's terminal; `--json` must keep the text exact.
 */

/** Recolours the rest of the screen. */
const SGR = "\x1b[31m";
/** Retitles the terminal window. */
const OSC_TITLE = "\x1b]0;owned\x07";
/** 8-bit CSI followed by "clear screen". */
const C1_CLEAR = "\x9b2J";
const TITLE = `${OSC_TITLE}title`;
const TEXT = `${SGR}red${"\x1b[0m"} nul\0 ${C1_CLEAR} cr\rlast line`;
const TOOL_OUTPUT = `line one\n${OSC_TITLE}line two`;

/** Any C0 control but tab and newline, DEL, or a C1 control. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw control characters is the test
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

let server: SessiondProcess;
let client: SessiondClient;
let S: string[];
let session: string;

beforeAll(async () => {
  server = await startSessiond();
  S = ["--server", server.url];
  client = createSessiondClient({ baseUrl: server.url });
  const created = await client.store.createSession({ title: TITLE });
  session = created.session?.id as string;
  const message = (role: Role, text: string, toolName?: string) => ({
    kind: {
      case: "message" as const,
      value: {
        role,
        content: [{ part: { case: "text" as const, value: text } }],
        ...(toolName ? { toolCallId: "call-1", toolName } : {}),
      },
    },
  });
  await client.session.append({
    session,
    entries: [
      message(Role.USER, TEXT),
      {
        kind: {
          case: "message",
          value: {
            role: Role.ASSISTANT,
            content: [
              {
                part: {
                  case: "toolCall",
                  value: { id: "call-1", name: "sh" },
                },
              },
            ],
          },
        },
      },
      message(Role.TOOL, TOOL_OUTPUT, `sh${SGR}`),
    ],
  });
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

async function stdoutOf(...args: string[]): Promise<string> {
  const r = await runCli([...args, ...S]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return r.stdout;
}

// A carriage return alone is shown as \r by show, show --state and tail
// alike (CRLF is a line break: one space in a one-line preview).
describe("terminal escape sequences in session text", () => {
  it("show draws previews with escape sequences made visible, never raw", async () => {
    const out = await stdoutOf("show", session);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain("\\x1b]0;owned\\x07title");
    expect(out).toContain("\\x1b[31mred\\x1b[0m nul\\x00 \\x9b2J cr\\rlast line");
  });

  it("show --state prints message bodies with escape sequences made visible, lines kept", async () => {
    const out = await stdoutOf("show", session, "--state");
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain("user: \\x1b[31mred\\x1b[0m nul\\x00 \\x9b2J cr\\rlast line\n");
    expect(out).toContain("tool(sh\\x1b[31m): line one\n  \\x1b]0;owned\\x07line two\n");
  });

  it("tail prints entries with escape sequences made visible, one line each", async () => {
    const out = await stdoutOf("tail", session);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out.trimEnd().split("\n")).toHaveLength(4);
    expect(out).toContain("\\x1b[31mred\\x1b[0m nul\\x00 \\x9b2J cr\\rlast line");
  });

  it("ls shows a title with escape sequences made visible", async () => {
    const out = await stdoutOf("ls");
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain("\\x1b]0;owned\\x07title");
  });

  it("--json keeps the text exact", async () => {
    const state = JSON.parse(await stdoutOf("show", session, "--state", "--json"));
    const texts = state.state.messages.map(
      (m: { message: { content: { text?: string }[] } }) => m.message.content[0]?.text,
    );
    expect(texts).toContain(TEXT);
    expect(texts).toContain(TOOL_OUTPUT);
    const listed = (await stdoutOf("ls", "--json"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed.find((m) => m.id === session)?.title).toBe(TITLE);
  });
});
