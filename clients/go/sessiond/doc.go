// Package sessiond is the Go client of sessiond, a session store for LLM
// agents served over gRPC.
//
// It wraps the generated stubs of package sessiondv1 (StoreService and
// SessionService) and adds what makes them safe to use against a server that
// restarts or a network that drops replies:
//
//   - ids before send: ids a caller leaves empty are chosen here, before the
//     first attempt (entry ids on Append, the Leaf entry id on Rewind and
//     Reset, the session id on CreateSession, ForkSession and ImportSession).
//     A retried call carries the same ids and the server de-duplicates it,
//     so "outcome unknown" is safe to retry. A session id drawn in the call
//     that another session turns out to have (ALREADY_EXISTS or
//     created=false, while no earlier attempt may have reached the server)
//     is drawn again, up to 8 times (see IDsInterceptor).
//   - retry: unary calls that fail with UNAVAILABLE (or lose their stream to
//     the peer) are retried with exponential backoff and jitter. ABORTED (a
//     compare-and-swap conflict) and every other code are returned at once.
//     A DeleteSession retried after an attempt whose outcome is unknown and
//     answered NOT_FOUND succeeds with an empty response: the lost attempt
//     deleted the session.
//   - resumable watch: Client.WatchEntries returns a Watcher that reconnects
//     with after_seq = the last entry it delivered, so the caller sees every
//     entry once, in order, across server restarts.
//   - blobs: the server keeps large text, thinking and image parts as blobs
//     and answers with references (ContentPart.blob). GetState, GetEntries
//     and WatchEntries answers (ReadState and the Watcher too) get the parts
//     back, read with GetBlob, checked and cached (WithBlobCacheBytes);
//     WithBlobRefs keeps the references, and Client.GetBlob reads a blob or
//     a range of it. When the text, thinking and image parts over 256 KiB
//     (WithUploadPartsOver) of an Append or ImportSession add up to more
//     than half the max send message size (4 MiB unless
//     grpc.MaxCallSendMsgSize says otherwise), the largest are uploaded
//     with PutBlob first and sent as references until the rest fit in that
//     half, so a part larger than a message may be appended; a request that
//     fits goes as it is, in one call, and the server stores its large
//     parts as blobs itself. The caller's request is not modified (ids
//     aside, as above).
//   - tracing: every call carries the trace context of its ctx's
//     OpenTelemetry span, as the global propagator writes it (set
//     propagation.TraceContext{} for the W3C traceparent the server reads),
//     so the server's spans join the caller's trace.
//
// # Errors
//
// Every error returned by a call, and by Watcher.Next, is a gRPC status
// error: status.Code(err) gives its code (codes.NotFound, codes.Aborted,
// codes.InvalidArgument, ...) and status.Convert(err).Message() the server's
// message. The codes each RPC returns are documented in the proto
// (proto/sessiond/v1/*.proto) and on the generated client interfaces.
package sessiond
