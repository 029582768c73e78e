import { describe, expect, it } from "vitest";
import { parseRoute } from "./route.js";

describe("a link whose percent-escapes do not decode", () => {
  it("is a bad-link route naming the hash, not a URIError", () => {
    expect(parseRoute("#/w/team/s/%E0%A4%A")).toEqual({
      view: "bad-link",
      hash: "#/w/team/s/%E0%A4%A",
      workspace: "team",
    });
  });

  it("keeps the default workspace when the workspace itself is malformed", () => {
    expect(parseRoute("#/w/%ZZ")).toMatchObject({ view: "bad-link", workspace: "default" });
  });

  it("leaves a link that decodes as before", () => {
    expect(parseRoute("#/w/t%C3%A9am/s/%E0%A4%A4")).toMatchObject({
      view: "session",
      workspace: "téam",
      session: "\u0924",
    });
  });
});

describe("the start page", () => {
  it("is the list of workspaces, for no hash, #/ and #/w", () => {
    for (const hash of ["", "#", "#/", "#/w", "#/w/"]) {
      expect(parseRoute(hash)).toEqual({ view: "workspaces" });
    }
  });

  it("leaves a workspace's list where it was", () => {
    expect(parseRoute("#/w/team")).toMatchObject({ view: "list", workspace: "team" });
  });
});
