/**
 * `target` as its users see it, with some members replaced (a failing read,
 * a pause, one more session id); the others are its own, bound to it.
 */
export function withMembers<T extends object>(target: T, replaced: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(replaced, prop)) return replaced[prop as keyof T];
      const v = Reflect.get(t, prop, t);
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}
