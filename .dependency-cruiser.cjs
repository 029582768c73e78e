// The import boundaries of ARCHITECTURE.md, checked by `npm run lint:imports`
// (dependency-cruiser) in CI. A rule here is a sentence of ARCHITECTURE.md;
// change both together.

/** Test code and test support: tests, fixtures, conformance suites, harnesses. */
const TEST = "(\\.test\\.ts$|^test/|^bench/)";

/** A path under one of our layers, excluding test code. */
const layer = (name) => `^src/${name}/`;

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "A cycle makes two modules one concept in two files.",
      severity: "error",
      from: { pathNot: TEST },
      to: { circular: true },
    },
    {
      name: "production-never-imports-tests",
      comment: "Production code ships; test code and test support do not.",
      severity: "error",
      from: { path: "^src/", pathNot: TEST },
      to: { path: TEST },
    },
    {
      name: "core-is-pure",
      comment: "src/core imports nothing of ours but the generated messages (gen/).",
      severity: "error",
      from: { path: layer("core"), pathNot: TEST },
      to: { path: "^src/(?!core/)" },
    },
    {
      name: "storage-below-store",
      comment: "src/storage imports only src/core and gen/.",
      severity: "error",
      from: { path: layer("storage"), pathNot: TEST },
      to: { path: "^src/(?!core/|storage/)" },
    },
    {
      name: "store-below-transports",
      comment: "src/store imports only src/storage, src/core and gen/.",
      severity: "error",
      from: { path: layer("store"), pathNot: TEST },
      to: { path: "^src/(?!core/|storage/|store/)" },
    },
    {
      name: "importers-are-pure-mappings",
      comment:
        "src/importers (other tools' transcripts as sessiond logs) imports only src/core and gen/: the CLI reads the files and sends the result.",
      severity: "error",
      from: { path: layer("importers"), pathNot: TEST },
      to: { path: "^src/(?!core/|importers/)" },
    },
    {
      name: "server-not-storage",
      comment:
        "The server reaches storage only through the store (watching included), tests too: a second transport must not need more.",
      severity: "error",
      from: { path: layer("server") },
      to: { path: "^src/storage/" },
    },
    {
      name: "server-reaches-store-through-its-index",
      comment:
        "The server sees the store through src/store/index.ts only (SessionStore, Session, the watch and the types it exports): the store's files stay its own.",
      severity: "error",
      from: { path: layer("server"), pathNot: TEST },
      to: { path: "^src/store/(?!index\\.ts$)" },
    },
    {
      name: "server-only-rpc-and-ops-reach-the-store",
      comment:
        "Of the server's rooms, rpc/ (the handlers) and ops/ (sweepers, readiness, metrics) use the store; wire/, http/ and grpc/ carry bytes and connections and never do (the root's server.ts and config.ts name its types to compose them).",
      severity: "error",
      from: { path: "^src/server/(wire|http|grpc)/", pathNot: TEST },
      to: { path: "^src/(store|storage)/" },
    },
    {
      name: "server-wire-stands-alone",
      comment:
        "src/server/wire (response size, push streams, errors, the one-message and sent-status rules, connect-node's refusals) imports no other room of the server: every room may use it.",
      severity: "error",
      from: { path: "^src/server/wire/", pathNot: TEST },
      to: { path: "^src/server/(?!wire/)" },
    },
    {
      name: "server-rpc-is-transport-free",
      comment:
        "src/server/rpc (the handlers) knows no transport and no operations: it imports wire/ and the root's config types, never http/, grpc/ or ops/.",
      severity: "error",
      from: { path: "^src/server/rpc/", pathNot: TEST },
      to: { path: "^src/server/(http|grpc|ops)/" },
    },
    {
      name: "server-http-below-rpc",
      comment:
        "src/server/http (the port, keepalive, idle and aged connections, in-flight calls, UI assets, HTTP paths, the Connect Append ahead of connect-node) serves connections: it may use ops/ (logs, metrics, readiness, a call's start) but never the handlers (rpc/) or the grpc-js front.",
      severity: "error",
      from: { path: "^src/server/http/", pathNot: TEST },
      to: { path: "^src/server/(rpc|grpc)/" },
    },
    {
      name: "server-ops-beside-the-calls",
      comment:
        "src/server/ops (metrics, logs, traces, readiness, sweepers) observes calls through wire/ and works on the store; it never imports the handlers, the HTTP room or the grpc-js front.",
      severity: "error",
      from: { path: "^src/server/ops/", pathNot: TEST },
      to: { path: "^src/server/(rpc|http|grpc)/" },
    },
    {
      name: "server-rooms-not-the-root",
      comment:
        "The root of src/server composes the rooms (server.ts, edge.ts, index.ts, defaults.ts); a room imports from the root only config.ts (the server's configuration type).",
      severity: "error",
      from: { path: "^src/server/[a-z-]+/", pathNot: TEST },
      to: { path: "^src/server/(?!config\\.ts$)[a-z-]+\\.ts$" },
    },
    {
      name: "metrics-library-in-server-only",
      comment:
        "Only the server knows prom-client: the engines and the store report through a StorageObserver (src/storage/observer.ts), the clients measure nothing.",
      severity: "error",
      from: { path: "^src/(?!server/)", pathNot: TEST },
      to: { path: "prom-client" },
    },
    {
      name: "cli-reaches-storage-through-its-doors",
      comment:
        "The CLI opens engines (serve, copy, gc) and checks JSONL files (fsck) only through the engine contract (storage/engine.ts), the memory engine and each engine's index.ts, and keyrings through storage/keys/index.ts; an engine's internals stay its own.",
      severity: "error",
      from: { path: layer("cli"), pathNot: TEST },
      to: {
        path: "^src/storage/",
        pathNot:
          "^src/storage/(engine|memory)\\.ts$|^src/storage/(jsonl|postgres|keys)/index\\.ts$",
      },
    },
    {
      name: "server-not-client-or-cli",
      comment: "The server never imports the client or the CLI.",
      severity: "error",
      from: { path: layer("server"), pathNot: TEST },
      to: { path: "^src/(client|cli)/" },
    },
    {
      name: "client-not-server-store-storage-or-cli",
      comment: "The client talks to a server over the wire: it imports only core and gen.",
      severity: "error",
      from: { path: layer("client"), pathNot: TEST },
      to: { path: "^src/(server|store|storage|cli)/" },
    },
    {
      name: "browser-safe",
      comment:
        "sessiond/web runs in browsers: it, the transport-free client modules and core import no Node module and not connect-node (test/web/browser-bundle.test.ts bundles it for the browser too).",
      severity: "error",
      from: {
        path: "^src/(web/|core/|client/(sessiond-client|ids-interceptor|retry-interceptor|trace-interceptor|read-pages|watch)\\.ts$)",
        pathNot: TEST,
      },
      to: { dependencyTypesNot: ["local", "npm"], pathNot: "^gen/" },
    },
    {
      name: "browser-safe-npm",
      comment: "The browser half never reaches connect-node (Node's http2).",
      severity: "error",
      from: {
        path: "^src/(web/|ui/|core/|client/(?!client\\.ts$|index\\.ts$|session-manager\\.ts$))",
        pathNot: TEST,
      },
      to: { path: "@connectrpc/connect-node" },
    },
    {
      name: "web-uses-client-core-only",
      comment: "sessiond/web shares the client's transport-free modules, never the Node transport.",
      severity: "error",
      from: { path: layer("web"), pathNot: TEST },
      to: {
        path: "^src/(server|store|storage|cli)/|^src/client/(client|index|session-manager)\\.ts$",
      },
    },
    {
      name: "ui-browser-safe",
      comment:
        "The web viewer runs in browsers too: no Node module; its libraries (marked, DOMPurify) are bundled at build time, so devDependencies.",
      severity: "error",
      from: { path: layer("ui"), pathNot: TEST },
      to: { dependencyTypesNot: ["local", "npm", "npm-dev"], pathNot: "^gen/" },
    },
    {
      name: "ui-uses-web-only",
      comment:
        "The web viewer (src/ui, bundled for browsers by scripts/build-ui.mjs) talks to the server through sessiond/web only.",
      severity: "error",
      from: { path: layer("ui"), pathNot: TEST },
      to: { path: "^src/(?!ui/|web/index\\.ts$)" },
    },
    {
      name: "adapters-use-client-and-core-only",
      comment:
        "The agent-SDK adapters (sessiond/openai-agents, sessiond/claude-agent-sdk) are clients of a server: the client through its index, core and gen only.",
      severity: "error",
      from: { path: layer("adapters"), pathNot: TEST },
      to: { path: "^src/(server|store|storage|cli|web)/|^src/client/(?!index\\.ts$)" },
    },
    {
      name: "cli-uses-server-through-its-index",
      comment: "The CLI starts the server through src/server/index.ts, never its internals.",
      severity: "error",
      from: { path: layer("cli"), pathNot: TEST },
      to: { path: "^src/server/(?!index\\.ts$)" },
    },
    {
      name: "cli-uses-client-through-its-index",
      comment: "The CLI is a client like any other: src/client/index.ts only.",
      severity: "error",
      from: { path: layer("cli"), pathNot: TEST },
      to: { path: "^src/client/(?!index\\.ts$)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|gen_py|reports|\\.stryker-tmp[^/]*)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
