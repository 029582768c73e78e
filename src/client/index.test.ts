import { describe, expect, it } from "vitest";
import * as web from "../web/index.js";
import * as client from "./index.js";
import { Role, View } from "./index.js";

describe("sessiond/client's exports", () => {
  it("include the enums a request needs, Role and View", () => {
    expect(Role.USER).toBe(1);
    expect(View.CONTEXT).toBeTypeOf("number");
  });

  it("include every generated message and enum sessiond/web exports", () => {
    const generated = Object.keys(web).filter((name) => /Schema$|^Role$|^View$/.test(name));
    expect(generated.length).toBeGreaterThan(10);
    const missing = generated.filter((name) => !(name in client));
    expect(missing).toEqual([]);
  });
});
