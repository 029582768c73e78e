import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type { BlobRef, ContentPart, Entry } from "../../gen/sessiond/v1/entry_pb.js";
import type { SessionState } from "../../gen/sessiond/v1/session_pb.js";
import { StoreService } from "../../gen/sessiond/v1/store_service_pb.js";
import {
  type BlobContent,
  blobContentOf,
  blobRefPart,
  resolvedPart,
  withContent,
} from "../core/blob-parts.js";

/**
 * Blobs made invisible to callers (see BlobRef in the proto): the server
 * keeps large parts once and answers with references, and this transport
 * puts the parts back into GetState, GetEntries and WatchEntries answers,
 * so a caller (an SDK adapter, the CLI) gets the entries and the folded
 * state it appended, byte for byte. Parts too large for one request go the
 * other way: uploaded first (PutBlob, in chunks) and sent as references.
 * Browser-safe: hashing is Web Crypto's.
 */

export interface BlobOptions {
  /**
   * "resolve" (default): blob references in GetState, GetEntries and
   * WatchEntries answers are replaced by the parts they stand for (read
   * with GetBlob, cached); "refs": answers keep them, for a caller that
   * reads blobs itself (a viewer showing a preview first).
   */
  blobs?: "resolve" | "refs";
  /**
   * Text, thinking and image parts of an Append or ImportSession over this
   * many bytes may be uploaded before the call (PutBlob, in chunks) and
   * sent as references, so parts larger than a message may be appended.
   * They are uploaded only when the request needs it: while such parts
   * add up to more than half of `maxMessageBytes`, the largest go first;
   * the rest travel in the request and the server stores them as blobs
   * (one call instead of two: a 1 MiB image appended inline took 8 ms
   * p50 on bench b's machine, uploaded first 12 ms). Default 256 KiB; 0
   * never.
   */
  uploadPartsOverBytes?: number;
  /** The largest request the client sends (default 4 MiB): parts inline fill half of it at most. */
  maxMessageBytes?: number;
  /** Bytes of blobs kept for the next answer that names them. Default 64 MiB. */
  blobCacheBytes?: number;
}

export const DEFAULT_UPLOAD_PARTS_OVER_BYTES = 256 * 1024;
/** The server's default `--max-message-bytes`: the largest request a client sends unless told. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const DEFAULT_BLOB_CACHE_BYTES = 64 * 1024 * 1024;
/** Blobs read at once when an answer names several. */
const PARALLEL_READS = 4;
/** Bytes per PutBlob call. */
const UPLOAD_CHUNK_BYTES = 1024 * 1024;
/** Chunks of one upload refused because the server held more, before the refusal is the caller's. */
const UPLOAD_MOVES = 8;

type Store = ReturnType<typeof createClient<typeof StoreService>>;

/** Recently read blobs, least recently used out first. */
class BlobCache {
  private readonly map = new Map<string, Uint8Array>();
  private bytes = 0;
  constructor(private readonly max: number) {}

  get(k: string): Uint8Array | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }

  set(k: string, v: Uint8Array): void {
    if (v.length > this.max || this.map.has(k)) return;
    this.map.set(k, v);
    this.bytes += v.length;
    for (const [old, data] of this.map) {
      if (this.bytes <= this.max) break;
      this.map.delete(old);
      this.bytes -= data.length;
    }
  }
}

async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>);
  let hex = "";
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, "0");
  return hex;
}

function messageParts(e: Entry | undefined): ContentPart[] | undefined {
  return e?.kind.case === "message" ? e.kind.value.content : undefined;
}

/** Every part list of an answer that may hold references. */
function partListsOf(method: string, message: unknown): ContentPart[][] {
  const lists: ContentPart[][] = [];
  const add = (parts: ContentPart[] | undefined) => {
    if (parts?.some((p) => p.part.case === "blob")) lists.push(parts);
  };
  if (method === "GetState") {
    const state = (message as { state?: SessionState }).state;
    for (const m of state?.messages ?? []) add(m.message?.content);
  } else if (method === "GetEntries") {
    for (const e of (message as { entries: Entry[] }).entries) add(messageParts(e));
  } else if (method === "WatchEntries") {
    const event = (message as { event: { case?: string; value?: unknown } }).event;
    if (event.case === "entry") add(messageParts(event.value as Entry));
  }
  return lists;
}

/** The transport `base` with blobs resolved in answers and large parts uploaded (see BlobOptions). */
export function blobTransport(base: Transport, opts: BlobOptions): Transport {
  const resolve = opts.blobs !== "refs";
  const uploadOver = opts.uploadPartsOverBytes ?? DEFAULT_UPLOAD_PARTS_OVER_BYTES;
  const inlineBudget = (opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES) / 2;
  if (!resolve && uploadOver <= 0) return base;
  const store: Store = createClient(StoreService, base);
  const cache = new BlobCache(opts.blobCacheBytes ?? DEFAULT_BLOB_CACHE_BYTES);

  async function read(workspace: string, ref: BlobRef, signal?: AbortSignal): Promise<Uint8Array> {
    const k = `${workspace}/${ref.sha256}`;
    const cached = cache.get(k);
    if (cached !== undefined) return cached;
    const data = new Uint8Array(Number(ref.size));
    let at = 0;
    for await (const chunk of store.getBlob({ workspace, sha256: ref.sha256 }, { signal })) {
      data.set(chunk.data, Number(chunk.offset));
      at += chunk.data.length;
    }
    if (at !== data.length) {
      throw new Error(`blob ${ref.sha256}: read ${at} bytes, the reference says ${ref.size}`);
    }
    cache.set(k, data);
    return data;
  }

  async function resolveIn(
    method: string,
    workspace: string,
    message: unknown,
    signal?: AbortSignal,
  ) {
    const lists = partListsOf(method, message);
    if (lists.length === 0) return;
    // Each distinct blob once, a few at a time: a page of screenshots is
    // one round trip per PARALLEL_READS blobs, not one per part.
    const refs = new Map<string, BlobRef>();
    for (const parts of lists) {
      for (const p of parts)
        if (p.part.case === "blob") refs.set(p.part.value.sha256, p.part.value);
    }
    const bytes = new Map<string, Uint8Array>();
    const queue = [...refs.values()];
    const worker = async () => {
      for (let ref = queue.shift(); ref !== undefined; ref = queue.shift()) {
        bytes.set(ref.sha256, await read(workspace, ref, signal));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, queue.length) }, worker));
    for (const parts of lists) {
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i] as ContentPart;
        if (p.part.case !== "blob") continue;
        parts[i] = resolvedPart(p.part.value, bytes.get(p.part.value.sha256) as Uint8Array);
      }
    }
  }

  async function upload(workspace: string, content: BlobContent, signal?: AbortSignal) {
    const sha256 = await sha256Hex(content.bytes);
    const size = BigInt(content.bytes.length);
    let offset = 0;
    let moved = 0;
    for (;;) {
      const data = content.bytes.subarray(offset, offset + UPLOAD_CHUNK_BYTES);
      let res: { received: bigint; stored: boolean };
      try {
        res = await store.putBlob(
          { workspace, sha256, size, offset: BigInt(offset), data },
          { signal },
        );
      } catch (err) {
        // Someone else uploads the same content (another client, through
        // another replica) and the server holds more than this offset:
        // ask how much (an empty chunk at 0 is taken as a retry) and go on
        // from there. A few times; the next refusal is the caller's.
        if (ConnectError.from(err).code !== Code.FailedPrecondition || ++moved > UPLOAD_MOVES) {
          throw err;
        }
        res = await store.putBlob(
          { workspace, sha256, size, offset: 0n, data: new Uint8Array(0) },
          { signal },
        );
      }
      if (res.stored) break;
      offset = Number(res.received);
    }
    return sha256;
  }

  /**
   * The request with the large parts it cannot carry uploaded and replaced
   * by references (a copy where changed): the largest first, until the
   * parts left inline add up to half the max request size at most.
   */
  async function uploadIn(input: { workspace: string; entries: Entry[] }, signal?: AbortSignal) {
    const large: { i: number; j: number; content: BlobContent }[] = [];
    let inline = 0;
    input.entries.forEach((e, i) => {
      messageParts(e)?.forEach((p, j) => {
        const content = blobContentOf(p, uploadOver);
        if (content === undefined) return;
        large.push({ i, j, content });
        inline += content.bytes.length;
      });
    });
    if (inline <= inlineBudget) return input;
    large.sort((a, b) => b.content.bytes.length - a.content.bytes.length);
    const entries = input.entries.slice();
    const changed = new Map<number, ContentPart[]>();
    for (const { i, j, content } of large) {
      if (inline <= inlineBudget) break;
      const sha256 = await upload(input.workspace, content, signal);
      inline -= content.bytes.length;
      const parts = changed.get(i) ?? (messageParts(entries[i])?.slice() as ContentPart[]);
      parts[j] = blobRefPart(content, sha256);
      changed.set(i, parts);
    }
    for (const [i, parts] of changed) entries[i] = withContent(entries[i] as Entry, parts);
    return { ...input, entries };
  }

  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      let req = input;
      if (uploadOver > 0 && (method.name === "Append" || method.name === "ImportSession")) {
        // A full message (the caller may have passed an init shape) to read its parts.
        const full = create(method.input, input) as unknown as {
          workspace: string;
          entries: Entry[];
        };
        req = (await uploadIn(full, signal)) as unknown as typeof input;
      }
      // Not inline_blobs: measured on bench b, pages with blobs inlined made the
      // first whole read no faster and the server's peak RSS 2.5 x larger
      // (172 vs 68 MB) than GetBlob four at a time.
      const res = await base.unary(method, signal, timeoutMs, header, req, contextValues);
      if (resolve && (method.name === "GetState" || method.name === "GetEntries")) {
        await resolveIn(method.name, workspaceOf(input), res.message, signal);
      }
      return res;
    },
    async stream(method, signal, timeoutMs, header, input, contextValues) {
      if (!resolve || method.name !== "WatchEntries") {
        return base.stream(method, signal, timeoutMs, header, input, contextValues);
      }
      // The request (one: a server stream) names the workspace; it is sent before any answer.
      let workspace = "";
      const tapped = (async function* () {
        for await (const m of input) {
          workspace = workspaceOf(m);
          yield m;
        }
      })();
      const res = await base.stream(method, signal, timeoutMs, header, tapped, contextValues);
      const messages = res.message;
      return {
        ...res,
        message: (async function* () {
          for await (const m of messages) {
            await resolveIn(method.name, workspace, m, signal);
            yield m;
          }
        })(),
      } as typeof res;
    },
  };
}

function workspaceOf(req: unknown): string {
  const ws = (req as { workspace?: unknown }).workspace;
  return typeof ws === "string" ? ws : "";
}
