/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) for sessiond.
 *
 * Reflection is what lets `buf curl`, grpcurl, Postman and similar generic
 * clients call sessiond with no local .proto files: they ask the server for
 * the FileDescriptorProtos of its services. No ready implementation exists for
 * Connect-ES, but protobuf-es v2 keeps every generated file's
 * FileDescriptorProto (`DescFile.proto`), so the answers are just those
 * descriptors, serialized. Protocol:
 * https://github.com/grpc/grpc/blob/master/doc/server-reflection.md
 */
import { create, type DescFile, fromBinary, toBinary } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  file_grpc_reflection_v1_reflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
  ServerReflection as ServerReflectionV1,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import {
  file_grpc_reflection_v1alpha_reflection,
  ServerReflection as ServerReflectionV1alpha,
  ServerReflectionRequestSchema as V1alphaRequestSchema,
  ServerReflectionResponseSchema as V1alphaResponseSchema,
} from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";

export interface ReflectionOptions {
  /**
   * Files to describe, e.g. `file_sessiond_v1_store_service`. Their imports
   * (google/protobuf/*.proto included) are followed automatically.
   */
  readonly files: readonly DescFile[];
  /**
   * Full names of the services that list_services reports, e.g.
   * `StoreService.typeName`. Each must be declared in `files` (checked here,
   * so a typo fails at startup rather than in a client). The reflection
   * services themselves are added: they are served too.
   */
  readonly services: readonly string[];
}

/** grpc::StatusCode values used in error_response (the same numbers as Code). */
const NOT_FOUND = Code.NotFound;
const INVALID_ARGUMENT = Code.InvalidArgument;

/**
 * Serves grpc.reflection.v1.ServerReflection and its v1alpha twin.
 *
 * Both are served because clients differ: buf curl and recent grpcurl try v1
 * first and fall back to v1alpha; older tools know only v1alpha.
 */
export function registerReflection(router: ConnectRouter, options: ReflectionOptions): void {
  const index = new DescriptorIndex([
    ...options.files,
    file_grpc_reflection_v1_reflection,
    file_grpc_reflection_v1alpha_reflection,
  ]);
  const services = [
    ...new Set([
      ...options.services,
      ServerReflectionV1.typeName,
      ServerReflectionV1alpha.typeName,
    ]),
  ].sort();
  for (const name of services) {
    if (index.fileOfSymbol(name) === undefined) {
      throw new Error(`reflection: service ${name} is not declared in the given files`);
    }
  }
  const answer = (req: ServerReflectionRequest) => answerRequest(index, services, req);

  router.service(ServerReflectionV1, {
    serverReflectionInfo: (requests, ctx) => respond(requests, ctx, answer),
  });
  // v1alpha has the same messages under another package, i.e. the same wire
  // format: re-decoding the bytes as v1 keeps a single implementation.
  router.service(ServerReflectionV1alpha, {
    serverReflectionInfo: (requests, ctx) =>
      respond(requests, ctx, (req) => {
        const v1 = fromBinary(ServerReflectionRequestSchema, toBinary(V1alphaRequestSchema, req));
        const res = answer(v1);
        return fromBinary(V1alphaResponseSchema, toBinary(ServerReflectionResponseSchema, res));
      }),
  });
}

/**
 * One answer per request, in order. Problems with a request (unknown symbol
 * or file) are answered with error_response and the stream goes on, as the
 * protocol wants: a client resolving many symbols over one stream must not
 * lose it to one miss.
 */
async function* respond<Req, Res>(
  requests: AsyncIterable<Req>,
  ctx: HandlerContext,
  answer: (req: Req) => Res,
): AsyncGenerator<Res> {
  try {
    for await (const req of requests) yield answer(req);
  } catch (err) {
    // On shutdown / client cancel the request stream fails; report why the
    // call ended (see the connect-node notes) rather than a read error.
    if (ctx.signal.aborted) throw ctx.signal.reason;
    throw err;
  }
}

function answerRequest(
  index: DescriptorIndex,
  services: readonly string[],
  req: ServerReflectionRequest,
): ServerReflectionResponse {
  const base = { validHost: req.host, originalRequest: req };
  const files = (file: DescFile | undefined, what: string) =>
    file === undefined
      ? error(NOT_FOUND, `${what} not found`)
      : create(ServerReflectionResponseSchema, {
          ...base,
          messageResponse: {
            case: "fileDescriptorResponse",
            value: { fileDescriptorProto: index.closure(file) },
          },
        });
  const error = (code: number, message: string) =>
    create(ServerReflectionResponseSchema, {
      ...base,
      messageResponse: {
        case: "errorResponse",
        value: { errorCode: code, errorMessage: message },
      },
    });

  const r = req.messageRequest;
  switch (r.case) {
    case "listServices":
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "listServicesResponse",
          value: { service: services.map((name) => ({ name })) },
        },
      });
    case "fileByFilename":
      return files(index.fileByName(r.value), `file ${r.value}`);
    case "fileContainingSymbol":
      return files(index.fileOfSymbol(r.value), `symbol ${r.value}`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = r.value;
      return files(
        index.fileOfExtension(containingType, extensionNumber),
        `extension ${extensionNumber} of ${containingType}`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers(r.value);
      if (numbers === undefined) return error(NOT_FOUND, `type ${r.value} not found`);
      return create(ServerReflectionResponseSchema, {
        ...base,
        messageResponse: {
          case: "allExtensionNumbersResponse",
          value: { baseTypeName: r.value, extensionNumber: numbers },
        },
      });
    }
    default:
      return error(INVALID_ARGUMENT, "no message_request set");
  }
}

/**
 * Lookup tables over a set of files and everything they import, built once
 * at registration (the descriptors are static).
 */
class DescriptorIndex {
  readonly #files = new Map<string, DescFile>();
  readonly #symbols = new Map<string, DescFile>();
  /** extendee full name -> extension number -> declaring file */
  readonly #extensions = new Map<string, Map<number, DescFile>>();
  readonly #messages = new Set<string>();
  readonly #bytes = new Map<DescFile, Uint8Array>();

  constructor(roots: readonly DescFile[]) {
    const pending = [...roots];
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (this.#files.has(file.proto.name)) continue;
      this.#files.set(file.proto.name, file);
      this.#indexFile(file);
      pending.push(...file.dependencies);
    }
  }

  fileByName(name: string): DescFile | undefined {
    return this.#files.get(name);
  }

  /** Services, methods, messages (nested too), fields, oneofs, enums, enum values, extensions. */
  fileOfSymbol(name: string): DescFile | undefined {
    return this.#symbols.get(name.startsWith(".") ? name.slice(1) : name);
  }

  fileOfExtension(extendee: string, num: number): DescFile | undefined {
    return this.#extensions.get(extendee)?.get(num);
  }

  /** undefined when the message type is unknown; [] when it has no extensions. */
  extensionNumbers(extendee: string): number[] | undefined {
    if (!this.#messages.has(extendee)) return undefined;
    return [...(this.#extensions.get(extendee)?.keys() ?? [])].sort((a, b) => a - b);
  }

  /**
   * The serialized file followed by all its transitive imports. The protocol
   * allows skipping files already sent on the stream; always sending the full
   * set keeps the server stateless and lets a client use any single answer
   * on its own (buf curl needs the well-known types from it).
   */
  closure(file: DescFile): Uint8Array[] {
    const seen = new Set<DescFile>();
    const order: DescFile[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f)) return;
      seen.add(f);
      order.push(f);
      for (const dep of f.dependencies) visit(dep);
    };
    visit(file);
    return order.map((f) => this.#serialized(f));
  }

  #serialized(file: DescFile): Uint8Array {
    let bytes = this.#bytes.get(file);
    if (bytes === undefined) {
      bytes = toBinary(FileDescriptorProtoSchema, file.proto);
      this.#bytes.set(file, bytes);
    }
    return bytes;
  }

  #indexFile(file: DescFile): void {
    for (const type of nestedTypes(file)) {
      this.#symbols.set(type.typeName, file);
      switch (type.kind) {
        case "service":
          for (const method of type.methods)
            this.#symbols.set(`${type.typeName}.${method.name}`, file);
          break;
        case "message":
          this.#messages.add(type.typeName);
          for (const field of type.fields)
            this.#symbols.set(`${type.typeName}.${field.name}`, file);
          for (const oneof of type.oneofs)
            this.#symbols.set(`${type.typeName}.${oneof.name}`, file);
          break;
        case "enum": {
          // Enum values live in the scope that encloses the enum (C++ rules).
          const scope = type.typeName.slice(0, Math.max(0, type.typeName.lastIndexOf(".")));
          for (const value of type.values) {
            this.#symbols.set(scope === "" ? value.name : `${scope}.${value.name}`, file);
          }
          break;
        }
        case "extension": {
          let byNumber = this.#extensions.get(type.extendee.typeName);
          if (byNumber === undefined) {
            byNumber = new Map();
            this.#extensions.set(type.extendee.typeName, byNumber);
          }
          byNumber.set(type.number, file);
          break;
        }
      }
    }
  }
}
