/**
 * The language-neutral rules of conformance/README.md, for the TypeScript
 * runner: `${name}` placeholders, `expect` matching against proto JSON, and
 * `save` paths.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const WHOLE = /^\$\{(\w+)\}$/;
const PART = /\$\{(\w+)\}/g;

/** Replaces placeholders in every string of `v` (a whole-string placeholder by the value itself). */
export function substitute(v: Json, vars: Map<string, Json>): Json {
  if (typeof v === "string") {
    const whole = WHOLE.exec(v);
    if (whole !== null) return lookup(vars, whole[1] as string);
    return v.replace(PART, (_, name: string) => String(lookup(vars, name)));
  }
  if (Array.isArray(v)) return v.map((x) => substitute(x, vars));
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x, vars)]));
  }
  return v;
}

function lookup(vars: Map<string, Json>, name: string): Json {
  const value = vars.get(name);
  if (value === undefined) throw new Error(`\${${name}} is not set`);
  return value;
}

function isDefault(v: Json): boolean {
  if (v === false || v === 0 || v === "0" || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  return v !== null && typeof v === "object" && Object.keys(v).length === 0;
}

/** Undefined when `got` matches `want`, else where it does not. */
export function matches(want: Json, got: Json | undefined, at = "response"): string | undefined {
  if (got === undefined) return isDefault(want) ? undefined : `${at}: missing`;
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${at}: expected an array`;
    if (got.length !== want.length)
      return `${at}: expected ${want.length} elements, got ${got.length}`;
    for (const [i, w] of want.entries()) {
      const why = matches(w, got[i], `${at}[${i}]`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object" || Array.isArray(got))
      return `${at}: expected an object`;
    for (const [k, w] of Object.entries(want)) {
      const why = matches(w, got[k], `${at}.${k}`);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  return want === got
    ? undefined
    : `${at}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
}

/** The value at a dotted path ("entries.0.id"), or undefined. */
export function resolvePath(v: Json, path: string): Json | undefined {
  let cur: Json | undefined = v;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = Array.isArray(cur) ? cur[Number(part)] : cur[part];
  }
  return cur;
}
