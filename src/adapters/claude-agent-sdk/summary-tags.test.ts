import { describe, expect, it } from "vitest";
import { applyTagChanges, checkTagSet, checkTags } from "../../core/tags.js";
import { summaryOfTags, summaryTagChanges } from "./summary-tags.js";

const base = { "claude.project": "-work-proj", "claude.session": "5f0c2b9e" };

/** The tags after writing `data` over `tags`, checked as the server checks a SessionInfo. */
function written(tags: Record<string, string>, data: Record<string, unknown> | undefined) {
  const changes = summaryTagChanges(tags, data);
  checkTags(changes, "changes", true);
  const after = applyTagChanges(tags, changes);
  checkTagSet(after, "tags");
  return { changes, after };
}

describe("summary tags", () => {
  it("a summary of multi-byte text is cut between code points, each value within 256 bytes, and reads back", () => {
    const data = { firstPrompt: "😀é".repeat(120), cwd: "/work/proj", createdAt: 1767225600000 };
    const { after } = written(base, data);
    const values = Object.entries(after).filter(([k]) => k.startsWith("claude.summary."));
    expect(values.length).toBeGreaterThan(2);
    for (const [, v] of values) expect(Buffer.byteLength(v)).toBeLessThanOrEqual(256);
    expect(summaryOfTags(after)).toEqual(data);
  });

  it("rewriting changes only the values that differ and removes the ones no longer used", () => {
    const long = { firstPrompt: "x".repeat(600), lastPrompt: "a" };
    const { after } = written(base, long);
    const shorter = { firstPrompt: "x".repeat(10), lastPrompt: "a" };
    const { changes, after: next } = written(after, shorter);
    expect(changes["claude.summary.1"]).toBe("");
    expect(changes["claude.summary.2"]).toBe("");
    expect(summaryOfTags(next)).toEqual(shorter);
    expect(summaryTagChanges(next, shorter)).toEqual({});
  });

  it("a summary over half the tag budget is not stored, and the one held is removed", () => {
    const { after } = written(base, { customTitle: "short" });
    const { after: next } = written(after, { customTitle: "t".repeat(2100) });
    expect(summaryOfTags(next)).toBeUndefined();
    expect(next).toEqual(base);
  });

  it("a summary that fits alone but not beside the session's other tags is not stored", () => {
    const others: Record<string, string> = { ...base };
    for (let i = 0; i < 14; i++) others[`user.${i}`] = "v".repeat(240);
    const { after } = written(others, { customTitle: "t".repeat(1000) });
    expect(after).toEqual(others);
  });

  it("without a summary (no fold) the summary tags are removed", () => {
    const { after } = written(base, { customTitle: "short" });
    expect(written(after, undefined).after).toEqual(base);
    expect(summaryTagChanges(base, undefined)).toEqual({});
  });

  it("tags that do not read as a JSON object are no summary", () => {
    expect(summaryOfTags(base)).toBeUndefined();
    expect(summaryOfTags({ "claude.summary.0": '{"a":' })).toBeUndefined();
    expect(summaryOfTags({ "claude.summary.0": "[1]" })).toBeUndefined();
    expect(summaryOfTags({ "claude.summary.0": '{"a":', "claude.summary.1": "1}" })).toEqual({
      a: 1,
    });
  });
});
