import { describe, expect, it } from "vitest";
import { single } from "../grpc/call-io.js";
import { OneMessage } from "./one-message.js";

describe("OneMessage", () => {
  it("iterated, yields its message once, like any other single input", async () => {
    const got: unknown[] = [];
    for await (const m of new OneMessage({ session: "s" })) got.push(m);
    expect(got).toEqual([{ session: "s" }]);
  });

  it("is taken by a server-streaming handler's single() as it is, the same as when iterated", async () => {
    const m = { session: "s" };
    expect(await single(new OneMessage(m))).toBe(m);
    expect(
      await single(
        (async function* () {
          yield m;
        })(),
      ),
    ).toBe(m);
  });
});
