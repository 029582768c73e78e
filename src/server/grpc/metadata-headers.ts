import type * as grpc from "@grpc/grpc-js";

/** HTTP whitespace, which fetch's Headers strips from both ends of a value. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * The request header of a native gRPC call as a fetch `Headers`, read from
 * the call's grpc-js Metadata, with the content type connect-node would
 * show. `get` and `has` answer from the Metadata as a Headers built from
 * it would (values of a name joined by ", ", binary ones in base64, as
 * `Metadata.toHttp2Headers` gives them); anything else (iterating it,
 * changing it) goes to a real Headers built on first need, which answers
 * everything from then on.
 *
 * Why not a real Headers per call, as before: undici's Headers validates and
 * copies every metadata entry of every request (toHttp2Headers, then an
 * append each), ~9 µs of server CPU of a warm GetSession at 64 in flight
 * (A/B), while the server only ever `get`s two or three names of it (the
 * content type, `traceparent`, `authorization`).
 */
export class MetadataHeaders implements Headers {
  private real: Headers | undefined;

  constructor(
    private readonly metadata: grpc.Metadata,
    private readonly contentType: string,
  ) {}

  get(name: string): string | null {
    if (this.real !== undefined) return this.real.get(name);
    const key = name.toLowerCase();
    if (key === "content-type") return this.contentType;
    // A pseudo-header is no header name: the real Headers refuses it as fetch does.
    if (key.startsWith(":")) return this.materialized().get(name);
    const values = this.metadata.get(key);
    if (values.length === 0) return null;
    return values.map(textOf).join(", ");
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  append(name: string, value: string): void {
    this.materialized().append(name, value);
  }

  set(name: string, value: string): void {
    this.materialized().set(name, value);
  }

  delete(name: string): void {
    this.materialized().delete(name);
  }

  getSetCookie(): string[] {
    return this.materialized().getSetCookie();
  }

  forEach(fn: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.materialized().forEach((value, key) => {
      fn.call(thisArg, value, key, this);
    });
  }

  entries(): ReturnType<Headers["entries"]> {
    return this.materialized().entries();
  }

  keys(): ReturnType<Headers["keys"]> {
    return this.materialized().keys();
  }

  values(): ReturnType<Headers["values"]> {
    return this.materialized().values();
  }

  [Symbol.iterator](): ReturnType<Headers["entries"]> {
    return this.materialized()[Symbol.iterator]();
  }

  /** The real Headers of the same entries (what `begin` built for every call before). */
  private materialized(): Headers {
    if (this.real === undefined) {
      const real = new Headers();
      const fields = this.metadata.toHttp2Headers();
      for (const key in fields) {
        const value = fields[key];
        if (Array.isArray(value)) for (const v of value) real.append(key, v);
        else if (value !== undefined) real.append(key, String(value));
      }
      real.set("content-type", this.contentType);
      this.real = real;
    }
    return this.real;
  }
}

function textOf(value: string | Buffer): string {
  const text = typeof value === "string" ? value : value.toString("base64");
  return text.replace(EDGE_WHITESPACE, "");
}
