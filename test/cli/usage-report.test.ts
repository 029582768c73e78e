import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Role } from "../../gen/sessiond/v1/entry_pb.js";
import { createSessiondClient } from "../../src/client/index.js";
import { runCli } from "../harness/cli.js";
import { removeDataDir, type SessiondProcess, startSessiond } from "../harness/server.js";

/**
 * `sessiond usage-report` over a real server (the UsageReport handler on the
 * wire): a window, day buckets, by model and by a tag, the JSON form, and
 * the usage errors (the server's INVALID_ARGUMENT names the field).
 */

let server: SessiondProcess;
const T0 = Date.UTC(2026, 4, 6);
const H = 3_600_000;

async function cli(...args: string[]) {
  return runCli([...args, "--server", server.url, "-w", "usage-cli"]);
}

beforeAll(async () => {
  server = await startSessiond();
  const client = createSessiondClient({ baseUrl: server.url });
  const reply = (model: string, ms: number, input: number) => ({
    timestamp: timestampFromMs(ms),
    kind: {
      case: "message" as const,
      value: {
        role: Role.ASSISTANT,
        content: [{ part: { case: "text" as const, value: "ok" } }],
        model,
        usage: { inputTokens: BigInt(input), outputTokens: 1n },
      },
    },
  });
  for (const [team, model, day, input] of [
    ["red", "m1", 0, 100],
    ["red", "m2", 1, 20],
    ["blue", "m1", 1, 3],
  ] as const) {
    const s = await client.store.createSession({ workspace: "usage-cli", tags: { team } });
    await client.session.append({
      workspace: "usage-cli",
      session: s.session?.id as string,
      entries: [reply(model, T0 + day * 24 * H + H, input)],
    });
  }
});

afterAll(async () => {
  await server?.stop();
  if (server) await removeDataDir(server.dataDir);
});

describe("sessiond usage-report", () => {
  it("prints one row per day, model and team, and the total", async () => {
    const r = await cli(
      "usage-report",
      "--since",
      "2026-05-06",
      "--until",
      "2026-05-08",
      "--bucket",
      "day",
      "--by-model",
      "--group-by-tag",
      "team",
    );
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("usage-cli: 2026-05-06T00:00:00.000Z to 2026-05-08T00:00:00.000Z");
    const cells = lines.slice(2).map((l) => l.split(/\s+/).slice(0, 5));
    expect(cells).toEqual([
      ["2026-05-06T00:00:00.000Z", "m1", "red", "1", "1"],
      ["2026-05-07T00:00:00.000Z", "m1", "blue", "1", "1"],
      ["2026-05-07T00:00:00.000Z", "m2", "red", "1", "1"],
      ["total", "3", "3", "123", "3"],
    ]);
    expect(lines.at(-1)).toContain("0 (3 unpriced)");
  });

  it("answers the report as proto JSON, narrowed by --tag and the window", async () => {
    const r = await cli(
      "usage-report",
      "--since",
      "2026-05-07",
      "--until",
      "2026-05-08",
      "--tag",
      "team=red",
      "--json",
    );
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.total.inputTokens).toBe("20");
    expect(j.sessions).toBe("1");
    expect(j.rows).toEqual([
      expect.objectContaining({ bucketStart: "2026-05-07T00:00:00Z", sessions: "1" }),
    ]);
  });

  it("refuses a missing --since, a bad --bucket and an empty window", async () => {
    const none = await cli("usage-report");
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--since");
    const bucket = await cli("usage-report", "--since", "1d", "--bucket", "week");
    expect(bucket.code).toBe(2);
    expect(bucket.stderr).toContain('--bucket wants hour or day, got "week"');
    const empty = await cli("usage-report", "--since", "2026-05-07", "--until", "2026-05-07");
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain("end (2026-05-07T00:00:00.000Z) must be after start");
  });
});
