import { describe, expect, it } from "vitest";
import { dataLoss, isSessiondError, notFound, SessiondError, unavailable } from "./errors.js";

describe("SessiondError", () => {
  it("prints as 'SessiondError: <message>', so logs tell it from other errors", () => {
    expect(String(notFound('session "s1" not found'))).toBe(
      'SessiondError: session "s1" not found',
    );
  });

  it("is recognised with or without its code", () => {
    const err = notFound("gone");
    expect(isSessiondError(err)).toBe(true);
    expect(isSessiondError(err, "NOT_FOUND")).toBe(true);
    expect(isSessiondError(err, "INTERNAL")).toBe(false);
    expect(isSessiondError(new Error("gone"))).toBe(false);
  });
});

describe("errors with a cause", () => {
  it("DATA_LOSS keeps the underlying failure as its cause", () => {
    const cause = new Error("EIO: read failed");
    const err = dataLoss("session s1: unreadable record", cause);
    expect(err).toBeInstanceOf(SessiondError);
    expect(err.code).toBe("DATA_LOSS");
    expect(err.cause).toBe(cause);
  });

  it("UNAVAILABLE keeps the underlying failure as its cause", () => {
    const cause = new Error("ECONNREFUSED");
    const err = unavailable("database unreachable", cause);
    expect(err.code).toBe("UNAVAILABLE");
    expect(err.cause).toBe(cause);
  });
});
