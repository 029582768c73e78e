import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  capYoungGeneration,
  DEFAULT_DATA_DIR,
  DEFAULT_GRPC_SERVER,
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_KEEPALIVE_TIMEOUT_MS,
  DEFAULT_LISTEN,
  DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
  DEFAULT_MAX_CONNECTION_AGE_MS,
  DEFAULT_SERVER_LIMITS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  LOG_LEVELS,
  type LogLevel,
  parseTokensFile,
  SERVE_BUSY_LOAD,
  SERVE_SEMI_SPACE_MB,
  type ServerConfig,
  ServerMetrics,
  startServer,
} from "../server/index.js";
import type { StorageEngine } from "../storage/engine.js";
import { JsonlEngine } from "../storage/jsonl/index.js";
import { aeadImplementation } from "../storage/keys/index.js";
import { MemoryEngine } from "../storage/memory.js";
import { PostgresEngine } from "../storage/postgres/index.js";
import { SessionStore } from "../store/session-store.js";
import { CliError, type Command, intFlag, parse } from "./command.js";
import { type DebugSwitches, parseDebugSwitches } from "./debug-switches.js";
import { ENCRYPTION_OPTIONS, encryptionOf } from "./encryption-flags.js";
import { priceTableOf } from "./prices-flag.js";
import { RETENTION_FLAGS_HELP, RETENTION_OPTIONS, retentionOf } from "./retention-flags.js";
import { packageUiDir } from "./version.js";

const L = DEFAULT_SERVER_LIMITS;

const HELP = `Usage: sessiond serve [flags]

Serves StoreService and SessionService (gRPC, gRPC-Web and Connect on one port).

Flags:
  --listen HOST:PORT          address to bind (default ${DEFAULT_LISTEN}; port 0 = any free port)
  --data-dir DIR              where the jsonl engine stores sessions (default ${DEFAULT_DATA_DIR})
  --storage KIND              jsonl (default), memory, or postgres://user@host:port/db
  --keyring FILE              encryption at rest (jsonl, postgres): the keyring file (0600) whose
                              workspace keys wrap each sealed session's data key
  --encrypt-workspaces A,B    seal the new sessions of these workspaces (needs --keyring;
                              the keyring is created when missing, a key per workspace
                              made on first use)
  --encrypt-all               seal the new sessions of every workspace (needs --keyring)
  --pg-pool-size N            PostgreSQL connections (default 10)
  --pg-statement-timeout-ms N PostgreSQL statement_timeout, 0 = none (default 0)
  --auth-tokens FILE          bearer tokens: {"tokens":[{"token":"...","workspaces":["*"]}]}
  --insecure                  allow a non-loopback address without tokens
  --compress                  compress responses (gzip/br) for clients that accept it (default off)
  --tls-cert FILE --tls-key FILE   serve TLS (HTTP/2 with HTTP/1.1 fallback)
  --tls-client-ca FILE        require client certificates signed by this CA (mTLS)
  --max-message-bytes N       largest request/response message (default ${L.maxMessageBytes})
  --max-entries-per-append N  (default ${L.maxEntriesPerAppend})
  --max-entry-bytes N         (default ${L.maxEntryBytes})
  --default-page-size N       (default ${L.defaultPageSize})
  --max-page-size N           (default ${L.maxPageSize})
  --blob-threshold-bytes N    store text / thinking / image parts over N bytes once, as
                              blobs, 0 = never (default ${L.blobThresholdBytes})
  --max-blob-bytes N          largest blob (default ${L.maxBlobBytes})
  --blob-grace-ms N           blob collection leaves blobs and uploads used within this
                              long (default ${L.blobGraceMs})
  --max-watchers-per-session N (default ${L.maxWatchersPerSession})
  --max-watchers N            watch streams in total (default ${L.maxWatchersTotal})
  --max-concurrent-streams N  HTTP/2 streams per connection (default ${L.maxConcurrentStreams})
  --max-deadline-ms N         largest deadline a client may set, 0 = none (default ${L.maxDeadlineMs})
  --heartbeat-ms N            watch heartbeat interval (default ${DEFAULT_HEARTBEAT_MS})
  --shutdown-grace-ms N       how long SIGTERM waits for in-flight calls (default ${DEFAULT_SHUTDOWN_GRACE_MS})
  --grpc-server KIND          who answers native gRPC: grpc-js or connect (default ${DEFAULT_GRPC_SERVER})
  --h2c-speak-first-ms N      cleartext port: a new connection silent this long gets HTTP/2 SETTINGS first,
                              for grpc-core clients with short reconnect backoffs; HTTP/1.1 clients
                              must then send at once (default 0: wait for the client)
  --idle-timeout-ms N         close connections with no open stream and no traffic this long, 0 = never (default ${DEFAULT_IDLE_TIMEOUT_MS})
  --keepalive-ms N            PING HTTP/2 connections with open streams this often, 0 = never (default ${DEFAULT_KEEPALIVE_MS})
  --keepalive-timeout-ms N    close a connection whose PING goes unanswered this long (default ${DEFAULT_KEEPALIVE_TIMEOUT_MS})
  --max-connection-age-ms N   GOAWAY to connections this old (clients reconnect through the load balancer), 0 = never (default ${DEFAULT_MAX_CONNECTION_AGE_MS})
  --max-connection-age-grace-ms N  then cut their open streams (watches resume) after this long (default ${DEFAULT_MAX_CONNECTION_AGE_GRACE_MS})
  --log-level LEVEL           error, warn, info (default: a line per request) or debug (also probes, scrapes)
  --metrics on|off            Prometheus metrics on GET /metrics (default on)
  --metrics-token-file FILE   /metrics wants "Authorization: Bearer <the file's first line>"
  --drain-delay-ms N          on SIGTERM, keep serving this long after /readyz turns 503 (default 0)
  --prices FILE               price table for usage roll-ups (GetUsage) and cost metrics:
                              {"prices":[{"model":"m","from":"2026-01-01T00:00:00Z","currency":"USD",
                              "input_per_mtok":"3","output_per_mtok":"15","cache_read_per_mtok":"0.3",
                              "cache_write_per_mtok":"3.75"}]} (prices per million tokens)
${RETENTION_FLAGS_HELP}
  -h, --help                  show this help

GET /livez, /readyz and /metrics answer on the same port (HTTP/1.1 and HTTP/2).
Logs one JSON line per request on stderr. SIGTERM / SIGINT shut down gracefully (exit 0).`;

const OPTIONS = {
  ...RETENTION_OPTIONS,
  listen: { type: "string" },
  "data-dir": { type: "string" },
  storage: { type: "string" },
  ...ENCRYPTION_OPTIONS,
  "auth-tokens": { type: "string" },
  insecure: { type: "boolean" },
  compress: { type: "boolean" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-client-ca": { type: "string" },
  "max-message-bytes": { type: "string" },
  "max-entries-per-append": { type: "string" },
  "max-entry-bytes": { type: "string" },
  "default-page-size": { type: "string" },
  "max-page-size": { type: "string" },
  "blob-threshold-bytes": { type: "string" },
  "max-blob-bytes": { type: "string" },
  "blob-grace-ms": { type: "string" },
  "max-watchers-per-session": { type: "string" },
  "max-watchers": { type: "string" },
  "max-concurrent-streams": { type: "string" },
  "max-deadline-ms": { type: "string" },
  "heartbeat-ms": { type: "string" },
  "shutdown-grace-ms": { type: "string" },
  "idle-timeout-ms": { type: "string" },
  "h2c-speak-first-ms": { type: "string" },
  "keepalive-ms": { type: "string" },
  "keepalive-timeout-ms": { type: "string" },
  "max-connection-age-ms": { type: "string" },
  "max-connection-age-grace-ms": { type: "string" },
  "grpc-server": { type: "string" },
  "pg-pool-size": { type: "string" },
  "pg-statement-timeout-ms": { type: "string" },
  "log-level": { type: "string" },
  metrics: { type: "string" },
  "metrics-token-file": { type: "string" },
  "drain-delay-ms": { type: "string" },
  prices: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function splitListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen);
  if (m === null) throw new CliError(`--listen must be HOST:PORT, got "${listen}"`, 2);
  return { host: (m[1] ?? m[2]) as string, port: Number(m[3]) };
}

function readFile(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CliError(
      `--${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
}

/** The first line of the metrics token file, held to the rule of API tokens (16 characters at least). */
function metricsTokenOf(content: Buffer): string {
  const token = content.toString("utf8").split("\n")[0]?.trim() ?? "";
  if (token.length < 16) {
    throw new CliError(
      "--metrics-token-file: the token (first line) must be at least 16 characters",
      2,
    );
  }
  return token;
}

export const serve: Command = {
  name: "serve",
  help: HELP,
  async run(argv) {
    const { values: v } = parse("serve", argv, OPTIONS, false);
    if (v.help) {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    const { host, port } = splitListen(v.listen ?? DEFAULT_LISTEN);
    const kind = v.storage ?? "jsonl";
    const dataDir = resolve(v["data-dir"] ?? DEFAULT_DATA_DIR);
    let debug: DebugSwitches;
    try {
      debug = parseDebugSwitches(process.env.SESSIOND_DEBUG);
    } catch (err) {
      throw new CliError((err as Error).message, 2);
    }
    if (Object.keys(debug).length > 0) {
      process.stderr.write(
        `WARNING: SESSIOND_DEBUG=${Object.keys(debug).join(",")}: durability rules are switched OFF (tests only)\n`,
      );
    }
    const logLevel = v["log-level"] ?? "info";
    if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
      throw new CliError(`--log-level must be ${LOG_LEVELS.join(", ")}, got "${logLevel}"`, 2);
    }
    if (v.metrics !== undefined && v.metrics !== "on" && v.metrics !== "off") {
      throw new CliError(`--metrics must be on or off, got "${v.metrics}"`, 2);
    }
    const prices = v.prices === undefined ? undefined : priceTableOf(v.prices);
    const metrics = v.metrics === "off" ? undefined : new ServerMetrics();
    const observer = metrics?.storage;
    const postgresUrl = /^postgres(ql)?:\/\//.test(kind);
    const encryption = await encryptionOf(
      v,
      kind === "jsonl" || postgresUrl,
      "jsonl and postgres storage (not memory)",
    );
    let engine: StorageEngine;
    if (kind === "jsonl") {
      try {
        engine = new JsonlEngine({ dataDir, debug, observer, encryption });
      } catch (err) {
        // A data dir the engine cannot use stops the server here, before "listening".
        throw new CliError((err as Error).message);
      }
    } else if (kind === "memory") engine = new MemoryEngine();
    else if (postgresUrl) {
      try {
        engine = await PostgresEngine.open({
          url: kind,
          poolSize: intFlag("pg-pool-size", v["pg-pool-size"], 10),
          statementTimeoutMs: intFlag("pg-statement-timeout-ms", v["pg-statement-timeout-ms"], 0),
          observer,
          encryption,
        });
      } catch (err) {
        throw new CliError(`--storage postgres: ${(err as Error).message}`);
      }
    } else {
      throw new CliError(`--storage must be jsonl, memory or postgres://..., got "${kind}"`, 2);
    }
    let tokens: ServerConfig["tokens"] = [];
    if (v["auth-tokens"] !== undefined) {
      try {
        tokens = parseTokensFile(readFile("auth-tokens", v["auth-tokens"]).toString("utf8"));
      } catch (err) {
        throw new CliError(`--auth-tokens: ${(err as Error).message}`);
      }
    }
    if ((v["tls-cert"] === undefined) !== (v["tls-key"] === undefined)) {
      throw new CliError("--tls-cert and --tls-key go together", 2);
    }
    const grpcServer = v["grpc-server"] ?? DEFAULT_GRPC_SERVER;
    if (grpcServer !== "grpc-js" && grpcServer !== "connect") {
      throw new CliError(`--grpc-server must be grpc-js or connect, got "${grpcServer}"`, 2);
    }
    const limits = {
      maxMessageBytes: intFlag("max-message-bytes", v["max-message-bytes"], L.maxMessageBytes),
      maxEntriesPerAppend: intFlag(
        "max-entries-per-append",
        v["max-entries-per-append"],
        L.maxEntriesPerAppend,
      ),
      maxEntryBytes: intFlag("max-entry-bytes", v["max-entry-bytes"], L.maxEntryBytes),
      defaultPageSize: intFlag("default-page-size", v["default-page-size"], L.defaultPageSize),
      maxPageSize: intFlag("max-page-size", v["max-page-size"], L.maxPageSize),
      blobThresholdBytes: intFlag(
        "blob-threshold-bytes",
        v["blob-threshold-bytes"],
        L.blobThresholdBytes,
      ),
      maxBlobBytes: intFlag("max-blob-bytes", v["max-blob-bytes"], L.maxBlobBytes),
      blobGraceMs: intFlag("blob-grace-ms", v["blob-grace-ms"], L.blobGraceMs),
      maxWatchersPerSession: intFlag(
        "max-watchers-per-session",
        v["max-watchers-per-session"],
        L.maxWatchersPerSession,
      ),
      maxWatchersTotal: intFlag("max-watchers", v["max-watchers"], L.maxWatchersTotal),
      maxConcurrentStreams: intFlag(
        "max-concurrent-streams",
        v["max-concurrent-streams"],
        L.maxConcurrentStreams,
      ),
      maxDeadlineMs: intFlag("max-deadline-ms", v["max-deadline-ms"], L.maxDeadlineMs),
    };
    const config: ServerConfig = {
      host,
      port,
      tokens,
      insecure: v.insecure ?? false,
      compression: v.compress ?? false,
      tls:
        v["tls-cert"] !== undefined && v["tls-key"] !== undefined
          ? {
              cert: readFile("tls-cert", v["tls-cert"]),
              key: readFile("tls-key", v["tls-key"]),
              clientCa: v["tls-client-ca"]
                ? readFile("tls-client-ca", v["tls-client-ca"])
                : undefined,
            }
          : undefined,
      limits,
      heartbeatMs: intFlag("heartbeat-ms", v["heartbeat-ms"], DEFAULT_HEARTBEAT_MS),
      idleTimeoutMs: intFlag("idle-timeout-ms", v["idle-timeout-ms"], DEFAULT_IDLE_TIMEOUT_MS),
      h2cSpeakFirstMs: intFlag("h2c-speak-first-ms", v["h2c-speak-first-ms"], 0),
      keepaliveMs: intFlag("keepalive-ms", v["keepalive-ms"], DEFAULT_KEEPALIVE_MS),
      keepaliveTimeoutMs: positiveIntFlag(
        "keepalive-timeout-ms",
        v["keepalive-timeout-ms"],
        DEFAULT_KEEPALIVE_TIMEOUT_MS,
      ),
      maxConnectionAgeMs: intFlag(
        "max-connection-age-ms",
        v["max-connection-age-ms"],
        DEFAULT_MAX_CONNECTION_AGE_MS,
      ),
      maxConnectionAgeGraceMs: intFlag(
        "max-connection-age-grace-ms",
        v["max-connection-age-grace-ms"],
        DEFAULT_MAX_CONNECTION_AGE_GRACE_MS,
      ),
      shutdownGraceMs: intFlag(
        "shutdown-grace-ms",
        v["shutdown-grace-ms"],
        DEFAULT_SHUTDOWN_GRACE_MS,
      ),
      grpcServer,
      retention: retentionOf(v),
      logLevel: logLevel as LogLevel,
      metrics: metrics ?? false,
      metricsToken:
        v["metrics-token-file"] === undefined
          ? undefined
          : metricsTokenOf(readFile("metrics-token-file", v["metrics-token-file"])),
      drainDelayMs: intFlag("drain-delay-ms", v["drain-delay-ms"], 0),
      uiDir: packageUiDir(),
      prices,
    };
    // A promise rejection nobody awaited (a bug) must not take every client
    // down with it: log it as one JSON line and keep serving.
    process.on("unhandledRejection", (reason) => {
      const error = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), event: "unhandledRejection", error })}\n`,
      );
    });
    // This process is the server's: keep its young generation small, but
    // for sustained load (young-generation.ts).
    capYoungGeneration(SERVE_SEMI_SPACE_MB, undefined, SERVE_BUSY_LOAD);
    const store = new SessionStore(engine, {
      limits,
      debug: {
        blobsAfterAck: debug.blobsAfterAck === true,
        noSubscribeFirst: debug.noSubscribeFirst === true,
      },
    });
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer(store, config);
    } catch (err) {
      await store.close();
      throw new CliError((err as Error).message);
    }
    const where =
      kind === "jsonl"
        ? `jsonl files in ${dataDir}`
        : kind === "memory"
          ? "memory (lost on exit)"
          : `postgres at ${new URL(kind).host}${new URL(kind).pathname}`;
    process.stdout.write(`sessiond listening on ${server.url}, storing ${where}\n`);
    if (encryption !== undefined) {
      const aead = await aeadImplementation;
      const how = aead === "native" ? "the native addon" : "node:crypto (no native addon)";
      process.stdout.write(`encryption at rest: AES-256-GCM by ${how}\n`);
    }
    if (config.uiDir !== undefined && existsSync(join(config.uiDir, "index.html"))) {
      process.stdout.write(`web viewer at ${server.url}/ui/\n`);
    }
    await new Promise<void>((done) => {
      const stop = () => {
        process.off("SIGTERM", stop);
        process.off("SIGINT", stop);
        server.close().then(done, done);
      };
      process.on("SIGTERM", stop);
      process.on("SIGINT", stop);
    });
    return 0;
  },
};

/** An integer flag that must be above 0 (a PING cannot be answered in no time). */
function positiveIntFlag(name: string, value: string | undefined, fallback: number): number {
  const n = intFlag(name, value, fallback);
  if (n === 0) throw new CliError(`--${name} must be above 0`, 2);
  return n;
}
