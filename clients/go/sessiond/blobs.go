package sessiond

import (
	"cmp"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Blobs made invisible to callers (see BlobRef in the proto). The server
// keeps every text, thinking or image part over its threshold (serve
// --blob-threshold-bytes, 64 KiB) once, as a blob, and answers GetState,
// GetEntries and WatchEntries with references (ContentPart.blob) in their
// place. The connection Dial makes puts the parts back: each reference is
// read with GetBlob (checked against its size and SHA-256, kept in a
// per-client LRU cache) and replaced by the part it stands for, the part
// that was appended, byte for byte. Parts a request cannot carry go the
// other way: when the large parts of an Append or ImportSession add up to
// more than half the max send message size, the largest are uploaded
// first (PutBlob, 1 MiB chunks) and sent as references, until the rest
// fit in that half; so a part larger than the server's message limit may
// be appended, and a request that fits goes as it is, in one call (the
// server stores its large parts as blobs itself). The rules are the
// TypeScript client's (src/client/blob-transport.ts, src/core/blob-parts.ts).

const (
	// DefaultUploadPartsOver is the size over which a text, thinking or
	// image part of an Append or ImportSession may be uploaded as a blob
	// before the call, when the request needs it (see WithUploadPartsOver).
	DefaultUploadPartsOver = 256 * 1024
	// DefaultBlobCacheBytes is the size of a client's cache of blobs read
	// to resolve references (see WithBlobCacheBytes).
	DefaultBlobCacheBytes = 64 * 1024 * 1024
	// TextMediaType is the media type of the blob of a text or thinking
	// part.
	TextMediaType = "text/plain; charset=utf-8"
)

// uploadChunkBytes is the data of one PutBlob call (the server's chunk
// size too).
const uploadChunkBytes = 1024 * 1024

// defaultMaxSendBytes is the largest request the client counts on sending
// when grpc.MaxCallSendMsgSize does not say (grpc-go's own default is 2
// GiB): the server's default --max-message-bytes, 4 MiB. The large parts
// a request carries inline add up to half of it at most.
const defaultMaxSendBytes = 4 * 1024 * 1024

// WithBlobRefs keeps blob references in GetState, GetEntries and
// WatchEntries answers (ReadState and Client.WatchEntries included): a
// ContentPart.blob (sha256, size, part, media type, a preview of a text)
// stays where the part would be, for a caller that reads blobs itself
// (Client.GetBlob), e.g. a viewer that shows previews first. Uploads are
// not affected (see WithUploadPartsOver).
func WithBlobRefs() Option {
	return func(c *config) error {
		c.blobRefs = true
		return nil
	}
}

// WithUploadPartsOver sets the size over which a text, thinking or image
// part of an Append or ImportSession may be uploaded with PutBlob before
// the call and sent as a reference (default DefaultUploadPartsOver, 256
// KiB; 0: never, so a request must fit in a message of the server's
// limit). The bytes counted are a text's UTF-8 bytes and an image's data.
//
// Such parts are uploaded only when the request needs it: while they add
// up (over the whole request) to more than half the max send message size
// (the grpc.MaxCallSendMsgSize among the call's options and the
// connection's default call options, e.g. WithDialOptions(
// grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(n))); 4 MiB when
// none is set), the largest is uploaded and replaced by a reference, then
// the next largest, until the rest fit in that half. The rest travel in the
// request, and the server stores them as blobs itself: one call instead of
// two (a 1 MiB image appended inline took 8 ms p50 on the server's bench
// machine, uploaded first 12 ms). The uploads are part of the call: its
// deadline (WithCallTimeout's too) covers them.
func WithUploadPartsOver(bytes int) Option {
	return func(c *config) error {
		if bytes < 0 {
			return errors.New("sessiond: WithUploadPartsOver: the size must not be negative")
		}
		c.uploadOver = bytes
		return nil
	}
}

// WithBlobCacheBytes sets how many bytes of blobs a client keeps, least
// recently used out first, so that a state read again (or a blob named by
// several entries) is not downloaded again (default DefaultBlobCacheBytes,
// 64 MiB; 0: no cache). A blob larger than the cache is not kept.
func WithBlobCacheBytes(bytes int64) Option {
	return func(c *config) error {
		if bytes < 0 {
			return errors.New("sessiond: WithBlobCacheBytes: the size must not be negative")
		}
		c.blobCacheBytes = bytes
		return nil
	}
}

// GetBlob reads a blob of workspace (a BlobRef's sha256) from offset, at
// most length bytes (0: to the end), reading every chunk GetBlob streams.
// Errors: NOT_FOUND (no such blob in the workspace), INVALID_ARGUMENT (a
// malformed sha256, an offset past the end, or a negative offset or length,
// refused here), DATA_LOSS (chunks that do not follow each other). A
// stream: not retried.
func (c *Client) GetBlob(ctx context.Context, workspace, sha256 string, offset, length int64) ([]byte, error) {
	if offset < 0 || length < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "GetBlob: offset %d and length %d must not be negative", offset, length)
	}
	return readBlob(ctx, c.Store, workspace, sha256, uint64(offset), uint64(length))
}

// maxPrealloc caps the buffer readBlob sizes from the first chunk's
// announcement; a larger blob grows past it as it arrives.
const maxPrealloc = 256 * 1024 * 1024

// readBlob reads a blob, or a range of it, into one slice.
func readBlob(ctx context.Context, store sessiondv1.StoreServiceClient, workspace, sha string, offset, length uint64) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx) // ends the stream on an early return
	defer cancel()
	s, err := store.GetBlob(ctx, &sessiondv1.GetBlobRequest{Workspace: workspace, Sha256: sha, Offset: offset, Length: length})
	if err != nil {
		return nil, err
	}
	var data []byte
	for {
		ch, err := s.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		at := offset + uint64(len(data))
		if ch.GetOffset() != at {
			return nil, status.Errorf(codes.DataLoss, "GetBlob %s: a chunk at offset %d where %d was due", sha, ch.GetOffset(), at)
		}
		if data == nil {
			n := uint64(0)
			if size := ch.GetSize(); size > offset {
				n = size - offset
			}
			if length > 0 && length < n {
				n = length
			}
			data = make([]byte, 0, min(n, maxPrealloc))
		}
		data = append(data, ch.GetData()...)
	}
	if length > 0 && uint64(len(data)) > length {
		return nil, status.Errorf(codes.DataLoss, "GetBlob %s: %d bytes where at most %d were asked for", sha, len(data), length)
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// blobs resolves references in answers and uploads large parts of
// requests: the interceptors DialOptions installs (unary: after the ids,
// before the retry; stream: WatchEntries).
type blobs struct {
	resolve    bool
	uploadOver int
	cache      *blobCache
	retry      *RetryPolicy // of GetBlob reads; nil: none
}

// newBlobs is nil when there is nothing to do (references kept, no uploads).
func newBlobs(c *config) *blobs {
	if c.blobRefs && c.uploadOver <= 0 {
		return nil
	}
	b := &blobs{resolve: !c.blobRefs, uploadOver: c.uploadOver, cache: newBlobCache(c.blobCacheBytes)}
	if !c.noRetry {
		p := c.retry.withDefaults()
		b.retry = &p
	}
	return b
}

func (b *blobs) unary(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	switch method {
	case sessiondv1.SessionService_Append_FullMethodName, sessiondv1.StoreService_ImportSession_FullMethodName:
		if b.uploadOver > 0 {
			r, err := b.uploadIn(ctx, sessiondv1.NewStoreServiceClient(cc), req, maxSendBytes(opts)/2)
			if err != nil {
				return err
			}
			req = r
		}
	case sessiondv1.SessionService_GetState_FullMethodName, sessiondv1.SessionService_GetEntries_FullMethodName:
		if !b.resolve {
			break
		}
		if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
			return err
		}
		store := sessiondv1.NewStoreServiceClient(cc)
		ws := workspaceOf(req)
		switch r := reply.(type) {
		case *sessiondv1.GetStateResponse:
			for _, m := range r.GetState().GetMessages() {
				if err := b.resolveParts(ctx, store, ws, m.GetMessage().GetContent()); err != nil {
					return err
				}
			}
		case *sessiondv1.GetEntriesResponse:
			for _, e := range r.GetEntries() {
				if err := b.resolveParts(ctx, store, ws, e.GetMessage().GetContent()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

func (b *blobs) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !b.resolve || method != sessiondv1.SessionService_WatchEntries_FullMethodName {
		return streamer(ctx, desc, cc, method, opts...)
	}
	// Cancelled when the stream fails, ends or fails to resolve an entry (the
	// stream would stay open otherwise).
	ctx, cancel := context.WithCancel(ctx)
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &resolvingStream{ClientStream: cs, ctx: ctx, cancel: cancel, blobs: b, store: sessiondv1.NewStoreServiceClient(cc)}, nil
}

// resolvingStream is a WatchEntries stream whose entries have their
// references resolved.
type resolvingStream struct {
	grpc.ClientStream
	ctx       context.Context
	cancel    context.CancelFunc
	blobs     *blobs
	store     sessiondv1.StoreServiceClient
	workspace string // the request's, sent before any answer
}

func (s *resolvingStream) SendMsg(m interface{}) error {
	s.workspace = workspaceOf(m)
	return s.ClientStream.SendMsg(m)
}

func (s *resolvingStream) RecvMsg(m interface{}) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		s.cancel()
		return err
	}
	if r, ok := m.(*sessiondv1.WatchEntriesResponse); ok {
		if err := s.blobs.resolveParts(s.ctx, s.store, s.workspace, r.GetEntry().GetMessage().GetContent()); err != nil {
			s.cancel()
			return err
		}
	}
	return nil
}

func workspaceOf(req interface{}) string {
	if r, ok := req.(interface{ GetWorkspace() string }); ok {
		return r.GetWorkspace()
	}
	return ""
}

// resolveParts replaces the references among parts by the parts they stand
// for, in place.
func (b *blobs) resolveParts(ctx context.Context, store sessiondv1.StoreServiceClient, workspace string, parts []*sessiondv1.ContentPart) error {
	for i, p := range parts {
		ref := p.GetBlob()
		if ref == nil {
			continue
		}
		if err := knownPart(ref); err != nil {
			return err
		}
		data, err := b.read(ctx, store, workspace, ref)
		if err != nil {
			return err
		}
		if parts[i], err = resolvedPart(ref, data); err != nil {
			return err
		}
	}
	return nil
}

// read is the content of a reference, from the cache or GetBlob, checked
// against the reference's size and hash.
func (b *blobs) read(ctx context.Context, store sessiondv1.StoreServiceClient, workspace string, ref *sessiondv1.BlobRef) ([]byte, error) {
	key := workspace + "\x00" + ref.GetSha256()
	if data, ok := b.cache.get(key); ok {
		return data, nil
	}
	var data []byte
	var err error
	for attempt := 1; ; attempt++ {
		data, err = readBlob(ctx, store, workspace, ref.GetSha256(), 0, 0)
		if err == nil || b.retry == nil || !retryable(ctx, err) || attempt >= b.retry.MaxAttempts {
			break
		}
		t := time.NewTimer(b.retry.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != ref.GetSize() {
		return nil, status.Errorf(codes.DataLoss, "blob %s: read %d bytes, the reference says %d", ref.GetSha256(), len(data), ref.GetSize())
	}
	if got := sha256Hex(data); got != ref.GetSha256() {
		return nil, status.Errorf(codes.DataLoss, "blob %s: read bytes whose SHA-256 is %s", ref.GetSha256(), got)
	}
	b.cache.put(key, data)
	return data, nil
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// knownPart fails for a reference to a part this client cannot rebuild
// (BLOB_PART_UNSPECIFIED, or a kind newer than this client).
func knownPart(ref *sessiondv1.BlobRef) error {
	switch ref.GetPart() {
	case sessiondv1.BlobPart_BLOB_PART_TEXT, sessiondv1.BlobPart_BLOB_PART_THINKING, sessiondv1.BlobPart_BLOB_PART_IMAGE:
		return nil
	}
	return status.Errorf(codes.Unimplemented, "blob reference %s stands for a part this client does not know (%v)", ref.GetSha256(), ref.GetPart())
}

// resolvedPart is the part a reference stands for, from the blob's bytes:
// the part that was appended, field for field. An image gets a copy of
// data (which the cache keeps).
func resolvedPart(ref *sessiondv1.BlobRef, data []byte) (*sessiondv1.ContentPart, error) {
	if err := knownPart(ref); err != nil {
		return nil, err
	}
	if ref.GetPart() == sessiondv1.BlobPart_BLOB_PART_IMAGE {
		return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Image{Image: &sessiondv1.ImagePart{
			MimeType: ref.GetMediaType(),
			Data:     slices.Clone(data),
		}}}, nil
	}
	if !utf8.Valid(data) {
		return nil, status.Errorf(codes.DataLoss, "blob %s: a %v blob that is not UTF-8", ref.GetSha256(), ref.GetPart())
	}
	if ref.GetPart() == sessiondv1.BlobPart_BLOB_PART_TEXT {
		return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Text{Text: string(data)}}, nil
	}
	t := &sessiondv1.ThinkingPart{Thinking: string(data)}
	if ref.Signature != nil {
		t.Signature = proto.String(ref.GetSignature())
	}
	return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Thinking{Thinking: t}}, nil
}

// blobContent is what of a part would be a blob: its bytes and what the
// reference must keep.
type blobContent struct {
	part      sessiondv1.BlobPart
	data      []byte
	mediaType string
	signature *string
}

// contentBytes is the size of what of a part would be a blob: a text's or
// a thinking part's UTF-8 bytes, an image's data; 0 for a tool call or a
// reference.
func contentBytes(p *sessiondv1.ContentPart) int {
	switch k := p.GetPart().(type) {
	case *sessiondv1.ContentPart_Text:
		return len(k.Text)
	case *sessiondv1.ContentPart_Thinking:
		return len(k.Thinking.GetThinking())
	case *sessiondv1.ContentPart_Image:
		return len(k.Image.GetData())
	}
	return 0
}

// blobContentOf is the content of a text, thinking or image part over
// over bytes; nil for a smaller one, a tool call or a reference.
func blobContentOf(p *sessiondv1.ContentPart, over int) *blobContent {
	if contentBytes(p) <= over {
		return nil
	}
	switch k := p.GetPart().(type) {
	case *sessiondv1.ContentPart_Text:
		return &blobContent{part: sessiondv1.BlobPart_BLOB_PART_TEXT, data: []byte(k.Text), mediaType: TextMediaType}
	case *sessiondv1.ContentPart_Thinking:
		t := k.Thinking
		c := &blobContent{part: sessiondv1.BlobPart_BLOB_PART_THINKING, data: []byte(t.GetThinking()), mediaType: TextMediaType}
		if t.Signature != nil {
			c.signature = proto.String(t.GetSignature())
		}
		return c
	case *sessiondv1.ContentPart_Image:
		img := k.Image
		return &blobContent{part: sessiondv1.BlobPart_BLOB_PART_IMAGE, data: img.GetData(), mediaType: img.GetMimeType()}
	}
	return nil
}

// maxSendBytes is the max send message size the call's options set (grpc
// hands an interceptor the connection's default call options followed by
// the call's own; the last one wins, as in grpc), else
// defaultMaxSendBytes.
func maxSendBytes(opts []grpc.CallOption) int {
	n := defaultMaxSendBytes
	for _, o := range opts {
		if m, ok := o.(grpc.MaxSendMsgSizeCallOption); ok {
			n = m.MaxSendMsgSize
		}
	}
	return n
}

// refPart is the part that references c's blob (the server fills in the
// preview).
func (c *blobContent) refPart(sha string) *sessiondv1.ContentPart {
	return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Blob{Blob: &sessiondv1.BlobRef{
		Sha256:    sha,
		Size:      uint64(len(c.data)),
		Part:      c.part,
		MediaType: c.mediaType,
		Signature: c.signature,
	}}}
}

// uploadIn is req (an AppendRequest or ImportSessionRequest) with the large
// parts it cannot carry uploaded and replaced by references (see
// uploadEntries): a copy where anything changed, req itself otherwise. The
// caller's messages are never modified; the copy shares what it does not
// change with them.
func (b *blobs) uploadIn(ctx context.Context, store sessiondv1.StoreServiceClient, req interface{}, budget int) (interface{}, error) {
	switch r := req.(type) {
	case *sessiondv1.AppendRequest:
		entries, err := b.uploadEntries(ctx, store, r.GetWorkspace(), r.GetEntries(), budget)
		if err != nil || entries == nil {
			return req, err
		}
		out := shallowCopy(r)
		out.Entries = entries
		return out, nil
	case *sessiondv1.ImportSessionRequest:
		entries, err := b.uploadEntries(ctx, store, r.GetWorkspace(), r.GetEntries(), budget)
		if err != nil || entries == nil {
			return req, err
		}
		out := shallowCopy(r)
		out.Entries = entries
		return out, nil
	}
	return req, nil
}

// uploadEntries uploads the large parts of entries (over b.uploadOver
// bytes) that the request cannot carry: when they add up to more than
// budget bytes, the largest first (in order of appearance among equals),
// until those left inline add up to budget at most. It returns a new list
// with the entries whose parts were uploaded copied and changed, or nil
// when none was uploaded.
func (b *blobs) uploadEntries(ctx context.Context, store sessiondv1.StoreServiceClient, workspace string, entries []*sessiondv1.Entry, budget int) ([]*sessiondv1.Entry, error) {
	type candidate struct{ entry, part, size int }
	var large []candidate
	inline := 0
	for i, e := range entries {
		for j, p := range e.GetMessage().GetContent() {
			if n := contentBytes(p); n > b.uploadOver {
				large = append(large, candidate{i, j, n})
				inline += n
			}
		}
	}
	if len(large) == 0 || inline <= budget {
		return nil, nil
	}
	slices.SortStableFunc(large, func(x, y candidate) int { return cmp.Compare(y.size, x.size) })
	changed := map[int][]*sessiondv1.ContentPart{} // entry index: its new parts
	for _, l := range large {
		if inline <= budget {
			break
		}
		parts := changed[l.entry]
		if parts == nil {
			parts = slices.Clone(entries[l.entry].GetMessage().GetContent())
			changed[l.entry] = parts
		}
		c := blobContentOf(parts[l.part], b.uploadOver)
		sha, err := upload(ctx, store, workspace, c.data)
		if err != nil {
			return nil, err
		}
		parts[l.part] = c.refPart(sha)
		inline -= l.size
	}
	out := slices.Clone(entries)
	for i, parts := range changed {
		msg := shallowCopy(entries[i].GetMessage())
		msg.Content = parts
		entry := shallowCopy(entries[i])
		entry.Kind = &sessiondv1.Entry_Message{Message: msg}
		out[i] = entry
	}
	return out, nil
}

// uploadMoves is how many chunks of one upload may be refused because the
// server held more, before the refusal is the caller's.
const uploadMoves = 8

// upload stores data as a blob of workspace with PutBlob, chunk after chunk
// (each where the server's answer says it has got to), and returns its
// SHA-256. A blob the workspace already holds is answered stored at once.
// Every call goes through the connection's interceptors: a chunk is retried
// on UNAVAILABLE like any unary call. A chunk refused with
// FAILED_PRECONDITION (another client uploads the same content through
// another replica, and the server holds more than its offset) is followed
// by an empty chunk at 0, which asks where the upload stands; it goes on
// from there.
func upload(ctx context.Context, store sessiondv1.StoreServiceClient, workspace string, data []byte) (string, error) {
	sha := sha256Hex(data)
	size := uint64(len(data))
	moved := 0
	for offset := uint64(0); ; {
		end := min(offset+uploadChunkBytes, size)
		req := &sessiondv1.PutBlobRequest{
			Workspace: workspace,
			Sha256:    sha,
			Size:      size,
			Offset:    offset,
			Data:      data[offset:end],
		}
		res, err := store.PutBlob(ctx, req)
		asked := false
		if status.Code(err) == codes.FailedPrecondition && moved < uploadMoves {
			moved++
			asked = true
			res, err = store.PutBlob(ctx, &sessiondv1.PutBlobRequest{Workspace: workspace, Sha256: sha, Size: size})
		}
		if err != nil {
			return "", err
		}
		if res.GetStored() {
			return sha, nil
		}
		if (res.GetReceived() == offset && !asked) || res.GetReceived() >= size {
			return "", status.Errorf(codes.Internal, "PutBlob %s: the server holds %d of %d bytes after a chunk at %d, and has not stored it", sha, res.GetReceived(), size, offset)
		}
		offset = res.GetReceived()
	}
}

// shallowCopy is a new message with m's fields: sub-messages, lists, maps
// and bytes are shared with m, not copied (replace a field of the copy,
// never modify one in place).
func shallowCopy[M proto.Message](m M) M {
	src := m.ProtoReflect()
	dst := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(u)
	}
	return dst.Interface().(M)
}

// blobCache keeps recently read blobs up to max bytes, least recently used
// out first. A nil *blobCache keeps nothing.
type blobCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	lru   list.List // of *cachedBlob, most recent first
	items map[string]*list.Element
}

type cachedBlob struct {
	key  string
	data []byte
}

func newBlobCache(max int64) *blobCache {
	if max <= 0 {
		return nil
	}
	return &blobCache{max: max, items: map[string]*list.Element{}}
}

func (c *blobCache) get(key string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*cachedBlob).data, true
}

func (c *blobCache) put(key string, data []byte) {
	if c == nil || int64(len(data)) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	c.items[key] = c.lru.PushFront(&cachedBlob{key: key, data: data})
	c.bytes += int64(len(data))
	for c.bytes > c.max {
		el := c.lru.Back()
		old := el.Value.(*cachedBlob)
		c.lru.Remove(el)
		delete(c.items, old.key)
		c.bytes -= int64(len(old.data))
	}
}
