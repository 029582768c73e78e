import type { RootRecord } from "../storage/engine.js";

/**
 * A session and its subagent sessions, recursively, breadth first (the
 * session first), from the roots of its workspace: what DeleteSession with
 * subagents and retention remove together.
 */
export function familyOf(roots: readonly RootRecord[], sessionId: string): string[] {
  const children = new Map<string, string[]>();
  for (const r of roots) {
    const p = r.parentSessionId;
    // Stryker disable next-line ConditionalExpression,StringLiteral: top-level roots filed under "" are never looked up, as "" is no session id
    if (p === "") continue;
    const siblings = children.get(p);
    if (siblings === undefined) children.set(p, [r.sessionId]);
    else siblings.push(r.sessionId);
  }
  const order = [sessionId];
  const queued = new Set(order);
  // Visits the ids pushed while it runs: a breadth-first walk.
  for (const id of order) {
    for (const c of children.get(id) ?? []) {
      if (!queued.has(c)) {
        queued.add(c);
        order.push(c);
      }
    }
  }
  return order;
}
