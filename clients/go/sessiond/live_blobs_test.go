package sessiond

// Large parts as blobs against a live server (see live_test.go): an image
// of 5 MiB, larger than any message the server takes, is uploaded in chunks
// and appended as a reference; the state, the entries and a watch give it
// back byte for byte, with a 200 KB text and a 360 KB thinking part (with
// its signature) that travel inline and the server makes blobs itself; a
// request whose large parts fit in half a message is sent as it is, one
// that does not has only its largest parts uploaded, and the calls made say
// so; a client that keeps references gets them and reads the blob with
// GetBlob, whole and in ranges; a reference to a blob nobody uploaded is
// FAILED_PRECONDITION naming it.

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// testBytes is size bytes of a pattern that differs with seed.
func testBytes(size, seed int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*197 + seed*13 + i>>9)
	}
	return b
}

func imagePart(mime string, data []byte) *sessiondv1.ContentPart {
	return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Image{Image: &sessiondv1.ImagePart{MimeType: mime, Data: data}}}
}

func blobCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// bigAppend appends a user message (a short text and image) and an
// assistant message (a thinking part with a signature, then text).
func bigAppend(t *testing.T, c *Client, id string, image []byte, thinking, text string) *sessiondv1.AppendRequest {
	t.Helper()
	sig := "signature-1"
	req := &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{
		{Kind: &sessiondv1.Entry_Message{Message: &sessiondv1.Message{
			Role:    sessiondv1.Role_ROLE_USER,
			Content: []*sessiondv1.ContentPart{TextPart("look at this"), imagePart("image/png", image)},
		}}},
		{Kind: &sessiondv1.Entry_Message{Message: &sessiondv1.Message{
			Role: sessiondv1.Role_ROLE_ASSISTANT,
			Content: []*sessiondv1.ContentPart{
				{Part: &sessiondv1.ContentPart_Thinking{Thinking: &sessiondv1.ThinkingPart{Thinking: thinking, Signature: &sig}}},
				TextPart(text),
			},
		}}},
	}}
	before := proto.Clone(req).(*sessiondv1.AppendRequest)
	if _, err := c.Session.Append(blobCtx(t), req); err != nil {
		t.Fatal(err)
	}
	// Untouched but for the ids filled before send: the image is still
	// there, the very slice that was given.
	for i, e := range req.Entries {
		if e.Id == "" {
			t.Fatalf("entry %d has no id after the call", i)
		}
		before.Entries[i].Id = e.Id
	}
	if !proto.Equal(req, before) || &req.Entries[0].GetMessage().Content[1].GetImage().Data[0] != &image[0] {
		t.Fatal("Append modified the caller's request beyond its ids")
	}
	return req
}

// checkParts checks a user and an assistant message against what bigAppend sent.
func checkParts(t *testing.T, where string, user, assistant *sessiondv1.Message, image []byte, thinking, text string) {
	t.Helper()
	img := user.GetContent()[1].GetImage()
	if img == nil || img.GetMimeType() != "image/png" || !bytes.Equal(img.GetData(), image) {
		t.Fatalf("%s: the image came back as %v", where, user.GetContent()[1].GetBlob())
	}
	th := assistant.GetContent()[0].GetThinking()
	if th == nil || th.GetThinking() != thinking || th.GetSignature() != "signature-1" {
		t.Fatalf("%s: the thinking part came back as %v", where, assistant.GetContent()[0].GetBlob())
	}
	if got := assistant.GetContent()[1]; got.GetText() != text {
		t.Fatalf("%s: the text came back as %v", where, got.GetBlob())
	}
}

func TestLiveBlobsComeBackByteForByte(t *testing.T) {
	c := live(t)
	ctx := blobCtx(t)
	id := newSession(t, c)
	image := testBytes(5*1024*1024, 1)             // over the server's 4 MiB message limit: uploaded
	thinking := strings.Repeat("thought. ", 40000) // 360 KB: inline once the image is uploaded, made a blob by the server
	text := strings.Repeat("ß", 100000)            // 200 KB inline: the server makes it a blob
	req := bigAppend(t, c, id, image, thinking, text)
	userID, assistantID := req.Entries[0].Id, req.Entries[1].Id

	for _, read := range []struct {
		name string
		get  func() (*sessiondv1.GetStateResponse, error)
	}{
		{"GetState", func() (*sessiondv1.GetStateResponse, error) {
			return c.Session.GetState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: id})
		}},
		{"ReadState", func() (*sessiondv1.GetStateResponse, error) {
			return c.ReadState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: id})
		}},
	} {
		st, err := read.get()
		if err != nil {
			t.Fatalf("%s: %v", read.name, err)
		}
		ms := st.GetState().GetMessages()
		if len(ms) != 2 {
			t.Fatalf("%s: %d messages", read.name, len(ms))
		}
		checkParts(t, read.name, ms[0].GetMessage(), ms[1].GetMessage(), image, thinking, text)
	}

	entries, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*sessiondv1.Message{}
	for _, e := range entries.Entries {
		byID[e.Id] = e.GetMessage()
	}
	checkParts(t, "GetEntries", byID[userID], byID[assistantID], image, thinking, text)

	w := c.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id})
	defer w.Close()
	seen := map[string]*sessiondv1.Message{}
	for len(seen) < 2 {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEntry(); e != nil && (e.Id == userID || e.Id == assistantID) {
			seen[e.Id] = e.GetMessage()
		}
	}
	checkParts(t, "WatchEntries", seen[userID], seen[assistantID], image, thinking, text)

	// The log read back (over 5 MiB once resolved) imports as another
	// session: ImportSession uploads the large parts it cannot carry as
	// Append does.
	copyID := NewSessionID(time.Now())
	imported, err := c.Store.ImportSession(ctx, &sessiondv1.ImportSessionRequest{Workspace: workspace, SessionId: &copyID, Entries: entries.Entries})
	if err != nil || imported.GetSession().GetId() != copyID {
		t.Fatalf("ImportSession: %v, %v", imported, err)
	}
	if img := entries.Entries[1].GetMessage().GetContent()[1].GetImage(); img == nil {
		t.Fatal("ImportSession modified the caller's entries")
	}
	st, err := c.ReadState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: copyID})
	if err != nil || len(st.GetState().GetMessages()) != 2 {
		t.Fatalf("state of the imported copy: %v", err)
	}
	ms := st.GetState().GetMessages()
	checkParts(t, "the imported copy", ms[0].GetMessage(), ms[1].GetMessage(), image, thinking, text)
}

func TestLiveBlobRefsAndGetBlobRanges(t *testing.T) {
	c := live(t)
	refs := live(t, WithBlobRefs())
	ctx := blobCtx(t)
	id := newSession(t, c)
	image := testBytes(2*1024*1024+3, 2)      // over half a message: uploaded
	thinking := strings.Repeat("hmm ", 70000) // 280 KB: inline once the image is uploaded, made a blob by the server
	text := strings.Repeat("ß", 100000)       // 200 KB: made a blob by the server
	req := bigAppend(t, c, id, image, thinking, text)

	st, err := refs.Session.GetState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	ms := st.GetState().GetMessages()
	if len(ms) != 2 {
		t.Fatalf("%d messages", len(ms))
	}
	want := func(where string, p *sessiondv1.ContentPart, data []byte, part sessiondv1.BlobPart, mediaType string) *sessiondv1.BlobRef {
		t.Helper()
		ref := p.GetBlob()
		if ref == nil || ref.GetSha256() != sha256Hex(data) || ref.GetSize() != uint64(len(data)) ||
			ref.GetPart() != part || ref.GetMediaType() != mediaType {
			t.Fatalf("%s: %v, want a reference to %s (%d bytes, %v, %s)", where, p, sha256Hex(data), len(data), part, mediaType)
		}
		return ref
	}
	ref := want("image", ms[0].GetMessage().GetContent()[1], image, sessiondv1.BlobPart_BLOB_PART_IMAGE, "image/png")
	th := want("thinking", ms[1].GetMessage().GetContent()[0], []byte(thinking), sessiondv1.BlobPart_BLOB_PART_THINKING, TextMediaType)
	if th.GetSignature() != "signature-1" || !strings.HasPrefix(thinking, th.GetPreview()) || th.GetPreview() == "" {
		t.Fatalf("thinking reference: signature %q, preview %q", th.GetSignature(), th.GetPreview())
	}
	tx := want("text", ms[1].GetMessage().GetContent()[1], []byte(text), sessiondv1.BlobPart_BLOB_PART_TEXT, TextMediaType)
	if !strings.HasPrefix(text, tx.GetPreview()) || tx.GetPreview() == "" {
		t.Fatalf("text reference's preview %q", tx.GetPreview())
	}

	// Entries and the watch keep references too.
	entries, err := refs.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries.Entries {
		if e.Id == req.Entries[0].Id {
			want("GetEntries", e.GetMessage().GetContent()[1], image, sessiondv1.BlobPart_BLOB_PART_IMAGE, "image/png")
		}
	}
	w := refs.WatchEntries(ctx, &sessiondv1.WatchEntriesRequest{Workspace: workspace, Session: id})
	defer w.Close()
	for {
		ev, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e := ev.GetEntry(); e != nil && e.Id == req.Entries[0].Id {
			want("WatchEntries", e.GetMessage().GetContent()[1], image, sessiondv1.BlobPart_BLOB_PART_IMAGE, "image/png")
			break
		}
	}

	whole, err := refs.GetBlob(ctx, workspace, ref.GetSha256(), 0, 0)
	if err != nil || !bytes.Equal(whole, image) {
		t.Fatalf("GetBlob: %d bytes, %v", len(whole), err)
	}
	for _, r := range [][2]int64{{1000, 10}, {1024*1024 - 5, 10}, {2 * 1024 * 1024, 0}, {5, 2 * 1024 * 1024}} {
		got, err := refs.GetBlob(ctx, workspace, ref.GetSha256(), r[0], r[1])
		end := int64(len(image))
		if r[1] > 0 {
			end = min(r[0]+r[1], end) // a length past the end reads to the end
		}
		if err != nil || !bytes.Equal(got, image[r[0]:end]) {
			t.Fatalf("GetBlob from %d, %d bytes: got %d bytes, %v", r[0], r[1], len(got), err)
		}
	}
	_, err = refs.GetBlob(ctx, workspace, ref.GetSha256(), -1, 0)
	wantCode(t, err, codes.InvalidArgument, "GetBlob from a negative offset")
}

// calls is a test interceptor (inside ids and retry, once per attempt)
// that records the PutBlob and Append calls the client makes, the blobs
// client's own PutBlob calls included.
type calls struct {
	mu   sync.Mutex
	list []proto.Message
}

func (c *calls) interceptor(ctx context.Context, method string, req, reply interface{}, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if method == sessiondv1.StoreService_PutBlob_FullMethodName || method == sessiondv1.SessionService_Append_FullMethodName {
		c.mu.Lock()
		c.list = append(c.list, req.(proto.Message))
		c.mu.Unlock()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// take returns the calls recorded since the last take.
func (c *calls) take() []proto.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.list
	c.list = nil
	return l
}

// uniqueBytes is testBytes with a fresh entry id in front, so that no blob
// of an earlier run of the same workspace is already stored.
func uniqueBytes(size, seed int) []byte {
	b := testBytes(size, seed)
	copy(b, NewEntryID())
	return b
}

func TestLiveUploadsOnlyWhatTheRequestCannotCarry(t *testing.T) {
	const MiB = 1024 * 1024
	rec := &calls{}
	c := live(t, WithUnaryInterceptors(rec.interceptor))
	refs := live(t, WithBlobRefs())
	ctx := blobCtx(t)
	id := newSession(t, c)
	user := func(parts ...*sessiondv1.ContentPart) *sessiondv1.Entry {
		return &sessiondv1.Entry{Kind: &sessiondv1.Entry_Message{Message: &sessiondv1.Message{Role: sessiondv1.Role_ROLE_USER, Content: parts}}}
	}
	// readBack checks that the session's last entries hold images, in order,
	// byte for byte, in the state and in the entries; and that the server
	// keeps each as a blob (a client with references sees one).
	readBack := func(where string, c *Client, session string, images ...[]byte) {
		t.Helper()
		st, err := c.ReadState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: session})
		if err != nil {
			t.Fatal(err)
		}
		es, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: session})
		if err != nil {
			t.Fatal(err)
		}
		asRefs, err := refs.ReadState(ctx, &sessiondv1.GetStateRequest{Workspace: workspace, Session: session})
		if err != nil {
			t.Fatal(err)
		}
		collect := func(parts [][]*sessiondv1.ContentPart) (out []*sessiondv1.ContentPart) {
			for _, ps := range parts {
				for _, p := range ps {
					if p.GetImage() != nil || p.GetBlob().GetPart() == sessiondv1.BlobPart_BLOB_PART_IMAGE {
						out = append(out, p)
					}
				}
			}
			return out
		}
		var fromState, fromEntries, fromRefs [][]*sessiondv1.ContentPart
		for _, m := range st.GetState().GetMessages() {
			fromState = append(fromState, m.GetMessage().GetContent())
		}
		for _, e := range es.GetEntries() {
			fromEntries = append(fromEntries, e.GetMessage().GetContent())
		}
		for _, m := range asRefs.GetState().GetMessages() {
			fromRefs = append(fromRefs, m.GetMessage().GetContent())
		}
		for name, got := range map[string][]*sessiondv1.ContentPart{"ReadState": collect(fromState), "GetEntries": collect(fromEntries)} {
			if len(got) != len(images) {
				t.Fatalf("%s, %s: %d images, want %d", where, name, len(got), len(images))
			}
			for i, p := range got {
				if img := p.GetImage(); img == nil || img.GetMimeType() != "image/png" || !bytes.Equal(img.GetData(), images[i]) {
					t.Fatalf("%s, %s: image %d came back as %d bytes (%v)", where, name, i, len(img.GetData()), p.GetBlob())
				}
			}
		}
		got := collect(fromRefs)
		if len(got) != len(images) {
			t.Fatalf("%s, with references: %d images, want %d", where, len(got), len(images))
		}
		for i, p := range got {
			if p.GetBlob().GetSha256() != sha256Hex(images[i]) {
				t.Fatalf("%s: image %d is not kept as a blob: %v", where, i, p.GetBlob())
			}
		}
	}
	// sentParts is what each part of an Append request carried: "inline" or "ref".
	sentParts := func(req proto.Message) (out []string) {
		for _, e := range req.(*sessiondv1.AppendRequest).GetEntries() {
			for _, p := range e.GetMessage().GetContent() {
				if p.GetBlob() != nil {
					out = append(out, "ref")
				} else {
					out = append(out, "inline")
				}
			}
		}
		return out
	}

	// A 1 MiB image fits in half a message: one Append, no PutBlob.
	image := uniqueBytes(MiB, 11)
	if _, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{
		user(TextPart("one"), imagePart("image/png", image)),
	}}); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || !slices.Equal(sentParts(got[0]), []string{"inline", "inline"}) {
		t.Fatalf("a 1 MiB image: %d calls, want one Append carrying it inline", len(got))
	}
	readBack("a 1 MiB image", c, id, image)

	// 1 MiB + 1.5 MiB + 0.75 MiB: 3.25 MiB, over the 2 MiB of half a message.
	// The 1.5 MiB image alone is uploaded (two chunks), then the Append.
	a, big, small := uniqueBytes(MiB, 12), uniqueBytes(3*MiB/2, 13), uniqueBytes(3*MiB/4, 14)
	id2 := newSession(t, c)
	if _, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id2, Entries: []*sessiondv1.Entry{
		user(TextPart("three"), imagePart("image/png", a), imagePart("image/png", big)),
		user(imagePart("image/png", small)),
	}}); err != nil {
		t.Fatal(err)
	}
	got = rec.take()
	if len(got) != 3 {
		t.Fatalf("three images: %d calls, want PutBlob, PutBlob, Append", len(got))
	}
	for i, off := range []uint64{0, MiB} {
		p, ok := got[i].(*sessiondv1.PutBlobRequest)
		if !ok || p.GetSha256() != sha256Hex(big) || p.GetOffset() != off || p.GetSize() != uint64(len(big)) {
			t.Fatalf("call %d is not the chunk of the 1.5 MiB image at %d: %T", i, off, got[i])
		}
	}
	if s := sentParts(got[2]); !slices.Equal(s, []string{"inline", "inline", "ref", "inline"}) {
		t.Fatalf("the Append carried %v, want the 1.5 MiB image alone as a reference", s)
	}
	readBack("three images", c, id2, a, big, small)

	// Half of a max send size of 1.5 MiB set on the connection: the 1 MiB
	// image no longer fits and is uploaded first (one chunk).
	rec2 := &calls{}
	tight := live(t, WithUnaryInterceptors(rec2.interceptor), WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(3*MiB/2))))
	image = uniqueBytes(MiB, 15)
	id3 := newSession(t, tight)
	if _, err := tight.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id3, Entries: []*sessiondv1.Entry{
		user(imagePart("image/png", image)),
	}}); err != nil {
		t.Fatal(err)
	}
	got = rec2.take()
	if len(got) != 2 || got[0].(*sessiondv1.PutBlobRequest).GetSha256() != sha256Hex(image) || !slices.Equal(sentParts(got[1]), []string{"ref"}) {
		t.Fatalf("a 1 MiB image with a max send size of 1.5 MiB: %d calls, want PutBlob, then Append with a reference", len(got))
	}
	readBack("a max send size of 1.5 MiB", tight, id3, image)
}

func TestLiveUnknownBlobRefIsFailedPrecondition(t *testing.T) {
	c := live(t)
	ctx := ctxFor(t)
	id := newSession(t, c)
	missing := sha256Hex([]byte("never uploaded"))
	_, err := c.Session.Append(ctx, &sessiondv1.AppendRequest{Workspace: workspace, Session: id, Entries: []*sessiondv1.Entry{
		{Kind: &sessiondv1.Entry_Message{Message: &sessiondv1.Message{
			Role: sessiondv1.Role_ROLE_USER,
			Content: []*sessiondv1.ContentPart{{Part: &sessiondv1.ContentPart_Blob{Blob: &sessiondv1.BlobRef{
				Sha256: missing, Size: 14, Part: sessiondv1.BlobPart_BLOB_PART_TEXT, MediaType: TextMediaType,
			}}}},
		}}},
	}})
	wantCode(t, err, codes.FailedPrecondition, "Append of a reference to a blob never uploaded")
	if msg := status.Convert(err).Message(); !strings.Contains(msg, missing) {
		t.Fatalf("the error does not name the blob: %q", msg)
	}
	entries, err := c.Session.GetEntries(ctx, &sessiondv1.GetEntriesRequest{Workspace: workspace, Session: id})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(entries.Entries); n != 1 {
		t.Fatalf("%d entries after the refused append, want the session's first alone", n)
	}
	_, err = c.GetBlob(ctx, workspace, missing, 0, 0)
	wantCode(t, err, codes.NotFound, "GetBlob of a blob never uploaded")
}
