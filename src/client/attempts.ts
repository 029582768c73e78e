import { createContextKey } from "@connectrpc/connect";

/**
 * What the retry layer tells the ids layer about one call's attempts. The
 * ids interceptor sits outside the retry interceptor (so that every attempt
 * carries the same ids) and cannot see them; it puts a fresh record in the
 * call's context values and the retry interceptor marks it. Why the ids
 * layer asks: a CreateSession answered created=false means "an equal
 * session has this id", which is our own earlier attempt only when one may
 * have reached the server.
 */
export interface Attempts {
  /** An attempt failed after it may have reached the server (its answer was lost). */
  outcomeUnknown: boolean;
}

/** Where the record lives in a call's context values; undefined when no ids layer asked. */
export const ATTEMPTS = createContextKey<Attempts | undefined>(undefined, {
  description: "sessiond attempts",
});
