package sessiond

// Large parts as blobs against a live server (see live_test.go): an image
// of 5 MiB, larger than any message the server takes, is uploaded in chunks
// and appended as a reference; the state, the entries and a watch give it
// back byte for byte, with a 200 KB text the server makes a blob itself and
// a thinking part with its signature; a client that keeps references gets
// them and reads the blob with GetBlob, whole and in ranges; a reference to
// a blob nobody uploaded is FAILED_PRECONDITION naming it.

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
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
	thinking := strings.Repeat("thought. ", 40000) // 360 KB: uploaded
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
	// session: ImportSession uploads its large parts as Append does.
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
	image := testBytes(2*1024*1024+3, 2)
	thinking := strings.Repeat("hmm ", 70000) // 280 KB: uploaded
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
