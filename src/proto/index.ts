/**
 * `sessiond/proto`: the generated protobuf-es messages and the service
 * descriptors (StoreService, SessionService), for callers who bring their own
 * transport (`createClient(SessionService, transport)` from @connectrpc/connect)
 * or work with the wire types directly. Generated from proto/ into gen/.
 */
export * from "../../gen/sessiond/v1/entry_pb.js";
export * from "../../gen/sessiond/v1/session_pb.js";
export * from "../../gen/sessiond/v1/session_service_pb.js";
export * from "../../gen/sessiond/v1/store_service_pb.js";
