import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MetadataHeaders } from "./metadata-headers.js";

const CT = "application/grpc+proto";

/** The Headers `begin` built for every call before MetadataHeaders: the reference. */
function realOf(metadata: grpc.Metadata): Headers {
  const header = new Headers();
  const fields = metadata.toHttp2Headers();
  for (const key in fields) {
    const value = fields[key];
    if (Array.isArray(value)) for (const v of value) header.append(key, v);
    else if (value !== undefined) header.append(key, String(value));
  }
  header.set("content-type", CT);
  return header;
}

/** `get` and `has` of each name: the same from both. */
function expectSameGets(lite: Headers, real: Headers, names: readonly string[]): void {
  for (const name of names) {
    expect(lite.get(name), name).toBe(real.get(name));
    expect(lite.has(name), name).toBe(real.has(name));
  }
}

function sample(): grpc.Metadata {
  const m = new grpc.Metadata();
  m.add("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  m.add("authorization", "Bearer  abc ");
  m.add("x-many", "one");
  m.add("x-many", " two  ");
  m.add("x-empty", "");
  m.add("trace-bin", Buffer.from([0, 1, 2, 250]));
  m.add("content-type", "application/grpc");
  return m;
}

describe("MetadataHeaders", () => {
  it("answers get and has as the Headers built from the same metadata", () => {
    const m = sample();
    const real = realOf(m);
    const lite = new MetadataHeaders(m, CT);
    expectSameGets(lite, real, [
      "traceparent",
      "Authorization",
      "X-MANY",
      "x-empty",
      "trace-bin",
      "content-type",
      "missing",
    ]);
    expect(lite.get("x-many")).toBe("one, two");
    expect(lite.get("trace-bin")).toBe(Buffer.from([0, 1, 2, 250]).toString("base64"));
    expect(lite.get("content-type")).toBe(CT);
  });

  it("iterates as that Headers does", () => {
    const m = sample();
    expect([...new MetadataHeaders(m, CT)]).toEqual([...realOf(m)]);
    expect([...new MetadataHeaders(m, CT).keys()]).toEqual([...realOf(m).keys()]);
    expect([...new MetadataHeaders(m, CT).values()]).toEqual([...realOf(m).values()]);
    expect([...new MetadataHeaders(m, CT).entries()]).toEqual([...realOf(m).entries()]);
    const seen: [string, string, boolean][] = [];
    const lite = new MetadataHeaders(m, CT);
    lite.forEach((v, k, parent) => {
      seen.push([k, v, parent === lite]);
    });
    const want: [string, string, boolean][] = [];
    realOf(m).forEach((v, k) => {
      want.push([k, v, true]);
    });
    expect(seen).toEqual(want);
    expect(lite.getSetCookie()).toEqual([]);
  });

  it("changes go to a real Headers, which answers from then on", () => {
    const lite = new MetadataHeaders(sample(), CT);
    lite.set("x-many", "replaced");
    lite.append("x-new", "n");
    lite.delete("authorization");
    expect(lite.get("x-many")).toBe("replaced");
    expect(lite.get("x-new")).toBe("n");
    expect(lite.has("authorization")).toBe(false);
    expect(lite.get("traceparent")).toBe(sample().get("traceparent")[0]);
  });

  it("refuses a name that is no header name, as fetch's Headers does", () => {
    const lite = new MetadataHeaders(sample(), CT);
    expect(() => lite.get(":path")).toThrow(TypeError);
  });

  it("any metadata: get and has agree with the real Headers", () => {
    const key = fc.constantFrom("a", "b-c", "x-bin-not", "d-bin", "authorization");
    const text = fc.stringMatching(/^ ?[!-~]{0,8} ?$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(key, text), { maxLength: 12 }), (pairs) => {
        const m = new grpc.Metadata();
        for (const [k, v] of pairs) {
          if (k.endsWith("-bin")) m.add(k, Buffer.from(v));
          else m.add(k, v);
        }
        expectSameGets(new MetadataHeaders(m, CT), realOf(m), [
          "a",
          "B-C",
          "x-bin-not",
          "d-bin",
          "authorization",
          "zz",
          "content-type",
        ]);
      }),
    );
  });
});
