import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { create, createFileRegistry, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
  timestampFromDate,
} from "@bufbuild/protobuf/wkt";
import { type ConnectRouter, createClient, createConnectRouter } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { file_grpc_health_v1_health, Health } from "../../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  type ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import {
  file_sessiond_v1_session_service,
  SessionService,
} from "../../../gen/sessiond/v1/session_service_pb.js";
import {
  file_sessiond_v1_store_service,
  GetSessionResponseSchema,
  StoreService,
} from "../../../gen/sessiond/v1/store_service_pb.js";
import { startTestServer } from "../../../test/support/test-server.js";
import { HealthStatus, registerHealth } from "./health.js";
import { registerReflection } from "./reflection.js";

const BUF = fileURLToPath(new URL("../../../node_modules/.bin/buf", import.meta.url));
const NOT_FOUND = 5;

const SESSIOND = {
  files: [
    file_sessiond_v1_store_service,
    file_sessiond_v1_session_service,
    file_grpc_health_v1_health,
  ],
  services: [StoreService.typeName, SessionService.typeName, Health.typeName],
};

/**
 * The sessiond surface as far as generic clients see it: health, reflection
 * and a StoreService stub (test only: every method but GetSession is left to
 * the router's default UNIMPLEMENTED).
 */
function sessiondRoutes(router: ConnectRouter): void {
  registerHealth(router, new HealthStatus());
  router.service(StoreService, {
    getSession: (req) =>
      create(GetSessionResponseSchema, {
        session: {
          id: `${req.session}-full`,
          workspace: req.workspace || "default",
          createdAt: timestampFromDate(new Date("2025-01-02T03:04:05Z")),
          metadata: { origin: "stub" },
        },
      }),
  });
  registerReflection(router, SESSIOND);
}

type Request = MessageInitShape<typeof ServerReflectionRequestSchema>;

/** Sends `requests` on one v1 ServerReflectionInfo stream, returns the answers in order. */
async function reflect(baseUrl: string, requests: Request[]): Promise<ServerReflectionResponse[]> {
  const client = createClient(ServerReflection, createGrpcTransport({ baseUrl }));
  return collect(client.serverReflectionInfo(fromArray(requests), { timeoutMs: 10_000 }));
}

async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** Names of the files in a file_descriptor_response (v1 or v1alpha). */
function fileNames(res: { messageResponse: { case: string | undefined; value?: unknown } }) {
  expect(res.messageResponse.case).toBe("fileDescriptorResponse");
  const value = res.messageResponse.value as { fileDescriptorProto?: Uint8Array[] } | undefined;
  return (value?.fileDescriptorProto ?? []).map(
    (bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name,
  );
}

/**
 * A FileDescriptorSet must list imports before their importers; the protocol
 * does not order an answer, so a client sorts it (as this one does).
 */
function dependenciesFirst(protos: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(protos.map((p) => [p.name, p]));
  const sorted: FileDescriptorProto[] = [];
  const visit = (p: FileDescriptorProto | undefined) => {
    if (p === undefined || !byName.delete(p.name)) return;
    for (const dep of p.dependency) visit(byName.get(dep));
    sorted.push(p);
  };
  for (const p of protos) visit(p);
  return sorted;
}

function errorCode(res: ServerReflectionResponse): number | undefined {
  return res.messageResponse.case === "errorResponse"
    ? res.messageResponse.value.errorCode
    : undefined;
}

function runBuf(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // cwd outside the repo: the schema must come from reflection, not from
    // a buf.yaml found nearby.
    execFile(BUF, args, { cwd: tmpdir(), timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("server reflection over gRPC (Connect client)", () => {
  it("list_services names the sessiond, health and reflection services", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const [res] = await reflect(baseUrl, [
      { host: "h", messageRequest: { case: "listServices", value: "" } },
    ]);
    expect(res?.validHost).toBe("h");
    expect(res?.originalRequest?.messageRequest.case).toBe("listServices");
    expect(res?.messageResponse.case).toBe("listServicesResponse");
    const names =
      res?.messageResponse.case === "listServicesResponse"
        ? res.messageResponse.value.service.map((s) => s.name)
        : [];
    expect(names).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "sessiond.v1.SessionService",
      "sessiond.v1.StoreService",
    ]);
  }, 15_000);

  it("file_containing_symbol returns the file and all its imports, self-contained", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const [res] = await reflect(baseUrl, [
      { messageRequest: { case: "fileContainingSymbol", value: "sessiond.v1.SessionService" } },
    ]);
    if (res === undefined) throw new Error("no answer");
    const names = fileNames(res);
    expect(names[0]).toBe("sessiond/v1/session_service.proto");
    expect(names).toEqual(
      expect.arrayContaining([
        "sessiond/v1/entry.proto",
        "sessiond/v1/session.proto",
        "google/protobuf/timestamp.proto",
        "google/protobuf/struct.proto",
      ]),
    );
    expect(new Set(names).size).toBe(names.length);
    // A client can build a full schema from this one answer.
    if (res.messageResponse.case !== "fileDescriptorResponse") return;
    const protos = res.messageResponse.value.fileDescriptorProto.map((b) =>
      fromBinary(FileDescriptorProtoSchema, b),
    );
    const registry = createFileRegistry(
      create(FileDescriptorSetSchema, { file: dependenciesFirst(protos) }),
    );
    const service = registry.getService("sessiond.v1.SessionService");
    expect(service?.methods.map((m) => m.name)).toContain("Append");
    expect(registry.getMessage("sessiond.v1.Entry")?.field.timestamp?.message?.typeName).toBe(
      "google.protobuf.Timestamp",
    );
  }, 15_000);

  it("resolves methods, messages, nested types, fields, enum values and file names", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const cases: [NonNullable<Request["messageRequest"]>, string][] = [
      [
        { case: "fileContainingSymbol", value: "sessiond.v1.StoreService.ListSessions" },
        "sessiond/v1/store_service.proto",
      ],
      [{ case: "fileContainingSymbol", value: "sessiond.v1.Entry" }, "sessiond/v1/entry.proto"],
      [{ case: "fileContainingSymbol", value: ".sessiond.v1.Role" }, "sessiond/v1/entry.proto"],
      [{ case: "fileContainingSymbol", value: "sessiond.v1.ROLE_USER" }, "sessiond/v1/entry.proto"],
      [
        { case: "fileContainingSymbol", value: "sessiond.v1.Entry.parent_id" },
        "sessiond/v1/entry.proto",
      ],
      [
        { case: "fileContainingSymbol", value: "grpc.health.v1.HealthCheckResponse.ServingStatus" },
        "grpc/health/v1/health.proto",
      ],
      [
        { case: "fileContainingSymbol", value: "google.protobuf.Timestamp" },
        "google/protobuf/timestamp.proto",
      ],
      [
        { case: "fileContainingSymbol", value: "grpc.reflection.v1alpha.ServerReflection" },
        "grpc/reflection/v1alpha/reflection.proto",
      ],
      [{ case: "fileByFilename", value: "sessiond/v1/entry.proto" }, "sessiond/v1/entry.proto"],
      [
        { case: "fileByFilename", value: "google/protobuf/struct.proto" },
        "google/protobuf/struct.proto",
      ],
    ];
    const answers = await reflect(
      baseUrl,
      cases.map(([messageRequest]) => ({ messageRequest })),
    );
    expect(answers).toHaveLength(cases.length);
    answers.forEach((res, i) => {
      expect(fileNames(res)[0], JSON.stringify(cases[i]?.[0])).toBe(cases[i]?.[1]);
    });
  }, 15_000);

  it("answers misses with error_response NOT_FOUND and keeps the stream going", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const answers = await reflect(baseUrl, [
      { messageRequest: { case: "fileContainingSymbol", value: "nope.v1.Nope" } },
      { messageRequest: { case: "fileByFilename", value: "nope/v1/nope.proto" } },
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "sessiond.v1.Entry", extensionNumber: 1000 },
        },
      },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "nope.v1.Nope" } },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "sessiond.v1.Entry" } },
      { messageRequest: { case: "listServices", value: "*" } },
      {},
    ]);
    expect(answers.slice(0, 4).map(errorCode)).toEqual([
      NOT_FOUND,
      NOT_FOUND,
      NOT_FOUND,
      NOT_FOUND,
    ]);
    expect(answers[4]?.messageResponse).toEqual({
      case: "allExtensionNumbersResponse",
      value: expect.objectContaining({ baseTypeName: "sessiond.v1.Entry", extensionNumber: [] }),
    });
    expect(answers[5]?.messageResponse.case).toBe("listServicesResponse");
    expect(errorCode(answers[6] as ServerReflectionResponse)).toBe(3); // INVALID_ARGUMENT
  }, 15_000);

  it("serves v1alpha with the same answers", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const client = createClient(ServerReflectionV1alpha, createGrpcTransport({ baseUrl }));
    const answers = await collect(
      client.serverReflectionInfo(
        fromArray([
          { messageRequest: { case: "listServices" as const, value: "" } },
          {
            messageRequest: {
              case: "fileContainingSymbol" as const,
              value: "sessiond.v1.SessionService",
            },
          },
          { messageRequest: { case: "fileContainingSymbol" as const, value: "nope.v1.Nope" } },
        ]),
        { timeoutMs: 10_000 },
      ),
    );
    expect(answers[0]?.$typeName).toBe("grpc.reflection.v1alpha.ServerReflectionResponse");
    expect(answers[0]?.messageResponse.case).toBe("listServicesResponse");
    const second = answers[1];
    if (second === undefined) throw new Error("no answer");
    expect(fileNames(second)).toContain("google/protobuf/timestamp.proto");
    expect(answers[2]?.messageResponse).toMatchObject({
      case: "errorResponse",
      value: { errorCode: NOT_FOUND },
    });
  }, 15_000);

  it("refuses at registration a service that the files do not declare", () => {
    const router = createConnectRouter();
    expect(() =>
      registerReflection(router, { files: [file_grpc_health_v1_health], services: ["x.v1.X"] }),
    ).toThrow(/x\.v1\.X/);
  });
});

describe("buf curl with no local protos", () => {
  it("--list-methods lists the StoreService methods via reflection", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    // With reflection, --list-methods takes the BASE url (a service path
    // there would be prefixed to the reflection method and 404).
    for (const reflectProtocol of ["grpc-v1", "grpc-v1alpha"]) {
      const out = await runBuf([
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect-protocol",
        reflectProtocol,
        "--list-methods",
        baseUrl,
      ]);
      expect(out.stderr).toBe("");
      expect(out.code).toBe(0);
      const methods = out.stdout.trim().split("\n");
      for (const m of StoreService.methods) {
        expect(methods).toContain(`sessiond.v1.StoreService/${m.name}`);
      }
      expect(methods).toContain("grpc.health.v1.Health/Check");
    }
  }, 60_000);

  it("calls Health/Check and a StoreService method, schema from reflection", async () => {
    const { baseUrl } = await startTestServer(sessiondRoutes);
    const grpc = ["curl", "--protocol", "grpc", "--http2-prior-knowledge"];
    const health = await runBuf([...grpc, `${baseUrl}/grpc.health.v1.Health/Check`, "-d", "{}"]);
    expect(health.stderr).toBe("");
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toEqual({ status: "SERVING" });

    const get = await runBuf([
      ...grpc,
      `${baseUrl}/sessiond.v1.StoreService/GetSession`,
      "-d",
      '{"session":"abcd"}',
    ]);
    expect(get.stderr).toBe("");
    expect(JSON.parse(get.stdout)).toEqual({
      session: {
        id: "abcd-full",
        workspace: "default",
        createdAt: "2025-01-02T03:04:05Z",
        metadata: { origin: "stub" },
      },
    });

    const unimplemented = await runBuf([
      ...grpc,
      `${baseUrl}/sessiond.v1.StoreService/ListSessions`,
      "-d",
      "{}",
    ]);
    expect(unimplemented.code).not.toBe(0);
    expect(unimplemented.stdout + unimplemented.stderr).toContain("unimplemented");
  }, 60_000);
});
