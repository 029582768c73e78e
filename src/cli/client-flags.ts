import {
  createSessiondClient,
  DEFAULT_MAX_MESSAGE_BYTES,
  type Protocol,
  type SessiondClient,
} from "../client/index.js";
import { DEFAULT_WORKSPACE } from "../core/ids.js";
import { type CliContext, CliError, intFlag } from "./command.js";

/**
 * The flags every client subcommand shares, and the one place that turns
 * them (plus the environment defaults main.ts read) into a client. Keeping
 * it here means `ls` and `import` cannot disagree about what --server means.
 */

export const DEFAULT_SERVER = "http://127.0.0.1:50051";

export { CLIENT_OPTIONS } from "./client-options.js";

/** The --help section for the shared flags. */
export const CLIENT_FLAGS_HELP = `Common flags:
  --server URL            server address (default $SESSIOND_URL, else ${DEFAULT_SERVER})
  --token T               bearer token (default $SESSIOND_TOKEN)
  -w, --workspace W       workspace (default "${DEFAULT_WORKSPACE}")
  --protocol P            grpc (default), connect or grpc-web
  --max-message-bytes N   largest request to send (default ${DEFAULT_MAX_MESSAGE_BYTES}); set it to
                          the server's --max-message-bytes to send larger messages
  --json                  machine-readable output (proto JSON, one object per line)
  -h, --help              show this help`;

const PROTOCOLS: readonly Protocol[] = ["grpc", "connect", "grpc-web"];

/** The gRPC length prefix is 32 bits; no message can be larger. */
const MAX_GRPC_MESSAGE_BYTES = 0xffffffff;

export interface ClientFlagValues {
  server?: string | undefined;
  token?: string | undefined;
  workspace?: string | undefined;
  protocol?: string | undefined;
  "max-message-bytes"?: string | undefined;
}

export interface Connection {
  readonly client: SessiondClient;
  /** The server's URL as given, for messages about the connection. */
  readonly server: string;
  /** The workspace every request names. */
  readonly workspace: string;
  /** The largest request the client sends (--max-message-bytes). */
  readonly maxMessageBytes: number;
}

/**
 * The client refuses larger requests itself (see SessiondClientOptions), so
 * without this flag the CLI could not use a server's higher limit.
 */
function maxMessageBytes(value: string | undefined): number {
  const n = intFlag("max-message-bytes", value, DEFAULT_MAX_MESSAGE_BYTES);
  if (n < 1 || n > MAX_GRPC_MESSAGE_BYTES) {
    throw new CliError(`--max-message-bytes must be 1..${MAX_GRPC_MESSAGE_BYTES}, got ${n}`, 2);
  }
  return n;
}

/** Builds the client from the shared flags; bad values are usage errors (exit 2). */
export function connect(values: ClientFlagValues, ctx: CliContext): Connection {
  const server = values.server ?? ctx.env.server ?? DEFAULT_SERVER;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(`--server must be a URL like ${DEFAULT_SERVER}, got "${server}"`, 2);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CliError(`--server must start with http:// or https://, got "${server}"`, 2);
  }
  const protocol = (values.protocol ?? "grpc") as Protocol;
  if (!PROTOCOLS.includes(protocol)) {
    throw new CliError(`--protocol must be grpc, connect or grpc-web, got "${values.protocol}"`, 2);
  }
  const token = values.token ?? ctx.env.token;
  const limit = maxMessageBytes(values["max-message-bytes"]);
  const client = createSessiondClient({
    baseUrl: server.replace(/\/+$/, ""),
    protocol,
    ...(token ? { token } : {}),
    maxMessageBytes: limit,
  });
  return {
    client,
    server,
    workspace: values.workspace ?? DEFAULT_WORKSPACE,
    maxMessageBytes: limit,
  };
}
