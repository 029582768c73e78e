/**
 * The TypeScript client's conformance runner (conformance/README.md): runs
 * every vector through `sessiond/client` over gRPC, so that the client's own
 * layer (ids before send, retry, the resumable watch, readState) is what the
 * vectors exercise. Settings come from the environment; the results go to
 * CONFORMANCE_OUT. Run by test/conformance/clients.test.ts.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type DescMessage,
  type DescMethod,
  fromJson,
  type JsonValue,
  type Message,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { type SessionState, SessionStateSchema } from "../../../gen/sessiond/v1/session_pb.js";
import {
  GetStateRequestSchema,
  SessionService,
  WatchEntriesRequestSchema,
  type WatchEntriesResponse,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import { StoreService } from "../../../gen/sessiond/v1/store_service_pb.js";
import {
  createSessiondClient,
  readState,
  watchEntriesResumable,
} from "../../../src/client/index.js";
import { canonicalCopy } from "./canonical.js";
import { type Json, matches, resolvePath, substitute } from "./vector-logic.js";

type Step = Record<string, Json>;
interface Vector {
  name: string;
  steps: Step[];
}
interface VectorResult {
  name: string;
  steps: number;
  passed: boolean;
  failedStep?: number;
  error?: string;
}

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") throw new Error(`${name} is not set`);
  return v;
}

const addr = env("SESSIOND_ADDR");
const vectorsDir = env("CONFORMANCE_VECTORS");
const workspace = env("CONFORMANCE_WORKSPACE");
const outFile = env("CONFORMANCE_OUT");
const restartDir = process.env.SESSIOND_RESTART_DIR;

const client = createSessiondClient({ baseUrl: `http://${addr}`, protocol: "grpc" });
const services = { StoreService, SessionService } as const;

/** The generated method of "Service.Method", and the client's call for it. */
function method(name: string): { desc: DescMethod; call: (req: Message) => Promise<Message> } {
  const [svc, rpc] = name.split(".");
  const service = services[svc as keyof typeof services];
  const desc = service?.methods.find((m) => m.name === rpc);
  if (service === undefined || desc === undefined || desc.methodKind !== "unary") {
    throw new Error(`unknown unary method ${name}`);
  }
  const stub = (svc === "StoreService" ? client.store : client.session) as unknown as Record<
    string,
    (req: Message) => Promise<Message>
  >;
  const fn = stub[desc.localName];
  if (fn === undefined) throw new Error(`the client has no ${desc.localName}`);
  return { desc, call: (req) => fn.call(stub, req) };
}

function parse<D extends DescMessage>(schema: D, json: Json) {
  return fromJson(schema, json as JsonValue);
}

function print(schema: DescMessage, msg: Message): Json {
  return toJson(schema, msg) as Json;
}

function stateBytes(res: { state?: SessionState }): string {
  if (res.state === undefined) throw new Error("the response has no state");
  return Buffer.from(
    toBinary(SessionStateSchema, canonicalCopy(SessionStateSchema, res.state)),
  ).toString("base64");
}

let restarts = 0;
async function restartServer(): Promise<void> {
  if (restartDir === undefined)
    throw new Error("no restart handshake (SESSIOND_RESTART_DIR unset)");
  restarts++;
  writeFileSync(join(restartDir, `restart-${restarts}.request`), "");
  const done = join(restartDir, `restart-${restarts}.done`);
  for (let waited = 0; !existsSync(done); waited += 50) {
    if (waited > 60_000) throw new Error(`restart ${restarts} not done within 60 s`);
    await sleep(50);
  }
}

/** An open resumable watch: entries arrive in a queue the steps read from. */
class OpenWatch {
  readonly entries: string[] = [];
  error: unknown;
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;

  constructor(req: Message & { session: string; afterSeq: bigint; workspace: string }) {
    void (async () => {
      try {
        const stream = watchEntriesResumable(client, {
          workspace: req.workspace,
          session: req.session,
          afterSeq: req.afterSeq,
          signal: this.abort.signal,
          retryDelayMs: 50,
        });
        for await (const ev of stream as AsyncIterable<WatchEntriesResponse>) {
          if (ev.event.case === "entry") this.entries.push(ev.event.value.id);
          this.wake?.();
        }
      } catch (err) {
        if (!this.abort.signal.aborted) this.error = err;
      }
      this.wake?.();
    })();
  }

  /** Waits until `n` entries past `from` have arrived. */
  async take(from: number, n: number): Promise<string[]> {
    const deadline = Date.now() + 30_000;
    while (this.entries.length < from + n) {
      if (this.error !== undefined) throw this.error;
      if (Date.now() > deadline) {
        throw new Error(`watch: ${this.entries.length - from} of ${n} entries within 30 s`);
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
    return this.entries.slice(from, from + n);
  }

  close(): void {
    this.abort.abort();
  }
}

async function runStep(
  step: Step,
  vars: Map<string, Json>,
  states: Record<string, string>,
  watches: Map<string, { watch: OpenWatch; read: number }>,
  vectorName: string,
): Promise<void> {
  const s = substitute(step, vars) as Step;
  const expectIds = (got: string[]) => {
    const want = s.expectIds as string[];
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(`expected ids ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
    }
  };
  const finish = (schema: DescMessage, res: Message) => {
    const json = print(schema, res);
    if (s.expect !== undefined) {
      const why = matches(s.expect, json);
      if (why !== undefined) throw new Error(`${why}; response ${JSON.stringify(json)}`);
    }
    if (s.save !== undefined) {
      for (const [name, path] of Object.entries(s.save as Record<string, string>)) {
        const value = resolvePath(json, path);
        if (value === undefined) throw new Error(`save: ${path} is not in ${JSON.stringify(json)}`);
        vars.set(name, value);
      }
    }
    if (typeof s.state === "string") {
      states[`${vectorName}/${s.state}`] = stateBytes(res as { state?: SessionState });
    }
  };

  if (typeof s.call === "string") {
    const { desc, call } = method(s.call);
    const req = parse(desc.input, s.request as Json);
    const times = 1 + (typeof s.repeat === "number" ? s.repeat : 0);
    let res: Message | undefined;
    try {
      // The same request object each time: the client filled its ids in before the first send.
      for (let i = 0; i < times; i++) res = await call(req);
    } catch (err) {
      const e = ConnectError.from(err);
      const code = codeName(e.code);
      if (s.expectError === undefined) throw new Error(`${code}: ${e.rawMessage}`);
      if (code !== s.expectError)
        throw new Error(`expected ${s.expectError}, got ${code}: ${e.rawMessage}`);
      const part = s.expectMessageContains;
      if (typeof part === "string" && !e.rawMessage.includes(part)) {
        throw new Error(
          `the ${code} message ${JSON.stringify(e.rawMessage)} does not name ${part}`,
        );
      }
      return;
    }
    if (s.expectError !== undefined) throw new Error(`expected ${s.expectError}, got OK`);
    finish(desc.output, res as Message);
    return;
  }
  if (s.readState !== undefined) {
    const res = await readState(client, parse(GetStateRequestSchema, s.request as Json));
    const { desc } = method("SessionService.GetState");
    finish(desc.output, res);
    return;
  }
  if (typeof s.readAll === "string") {
    const { desc, call } = method(s.readAll);
    const base = s.request as Record<string, Json>;
    const ids: string[] = [];
    if (s.readAll === "SessionService.GetEntries") {
      let after = "0";
      for (;;) {
        const res = (await call(parse(desc.input, { ...base, afterSeq: after }))) as unknown as {
          entries: { id: string; seq: bigint }[];
        };
        if (res.entries.length === 0) break;
        for (const e of res.entries) ids.push(e.id);
        after = String(res.entries[res.entries.length - 1]?.seq);
      }
    } else {
      let token = "";
      do {
        const res = (await call(parse(desc.input, { ...base, pageToken: token }))) as unknown as {
          sessions: { id: string }[];
          nextPageToken: string;
        };
        for (const m of res.sessions) ids.push(m.id);
        token = res.nextPageToken;
      } while (token !== "");
    }
    expectIds(ids);
    return;
  }
  if (typeof s.watch === "string") {
    const req = parse(WatchEntriesRequestSchema, s.request as Json);
    watches.set(s.watch, { watch: new OpenWatch(req), read: 0 });
    return;
  }
  if (typeof s.watchNext === "string") {
    const open = watches.get(s.watchNext);
    if (open === undefined) throw new Error(`no open watch ${s.watchNext}`);
    const want = s.expectIds as string[];
    const got = await open.watch.take(open.read, want.length);
    open.read += want.length;
    expectIds(got);
    return;
  }
  if (typeof s.watchClose === "string") {
    watches.get(s.watchClose)?.watch.close();
    watches.delete(s.watchClose);
    return;
  }
  if (s.restartServer === true) {
    await restartServer();
    return;
  }
  throw new Error(`unknown step ${JSON.stringify(Object.keys(s))}`);
}

/** gRPC code names as the vectors spell them (connect's Code enum is CamelCase). */
function codeName(code: number): string {
  return [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
  ][code] as string;
}

const results: VectorResult[] = [];
const states: Record<string, string> = {};
for (const file of readdirSync(vectorsDir)
  .filter((f) => f.endsWith(".json"))
  .sort()) {
  const vector = JSON.parse(readFileSync(join(vectorsDir, file), "utf8")) as Vector;
  const vars = new Map<string, Json>([["ws", workspace]]);
  const watches = new Map<string, { watch: OpenWatch; read: number }>();
  const result: VectorResult = { name: vector.name, steps: vector.steps.length, passed: true };
  for (const [i, step] of vector.steps.entries()) {
    try {
      await runStep(step, vars, states, watches, vector.name);
    } catch (err) {
      Object.assign(result, { passed: false, failedStep: i + 1, error: (err as Error).message });
      break;
    }
  }
  for (const { watch } of watches.values()) watch.close();
  results.push(result);
}
writeFileSync(outFile, `${JSON.stringify({ runner: "ts", vectors: results, states }, null, 1)}\n`);
process.exit(results.every((r) => r.passed) ? 0 : 1);
