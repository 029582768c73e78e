package sessiond

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestBlobCacheDropsTheLeastRecentlyUsed(t *testing.T) {
	c := newBlobCache(10)
	c.put("a", []byte("aaaa"))
	c.put("b", []byte("bbbb"))
	if _, ok := c.get("a"); !ok { // a is now the most recent
		t.Fatal("a is not cached")
	}
	c.put("c", []byte("cccc")) // 12 bytes: b goes
	if _, ok := c.get("b"); ok {
		t.Fatal("b, the least recently used, is still cached")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s is not cached", k)
		}
	}
	c.put("big", make([]byte, 11)) // larger than the cache: not kept, nothing dropped
	if _, ok := c.get("big"); ok || c.bytes != 8 {
		t.Fatalf("a blob over the cache's size: cached %v, %d bytes held", ok, c.bytes)
	}
	var none *blobCache = newBlobCache(0)
	none.put("a", []byte("a"))
	if _, ok := none.get("a"); ok {
		t.Fatal("a cache of 0 bytes keeps blobs")
	}
}

func TestBlobPartsGoOverThresholdAndComeBackTheSame(t *testing.T) {
	sig := "sig"
	image := bytes.Repeat([]byte{1, 2, 3}, 100)
	parts := []*sessiondv1.ContentPart{
		TextPart(strings.Repeat("ß", 100)), // 200 bytes of UTF-8
		{Part: &sessiondv1.ContentPart_Thinking{Thinking: &sessiondv1.ThinkingPart{Thinking: strings.Repeat("t", 101), Signature: &sig}}},
		{Part: &sessiondv1.ContentPart_Thinking{Thinking: &sessiondv1.ThinkingPart{Thinking: strings.Repeat("u", 101)}}},
		{Part: &sessiondv1.ContentPart_Image{Image: &sessiondv1.ImagePart{MimeType: "image/png", Data: image}}},
	}
	for _, p := range parts {
		c := blobContentOf(p, 100)
		if c == nil {
			t.Fatalf("%v: not over 100 bytes?", p)
		}
		ref := c.refPart(sha256Hex(c.data)).GetBlob()
		if ref.GetSize() != uint64(len(c.data)) || len(ref.GetSha256()) != 64 || ref.GetPreview() != "" {
			t.Fatalf("reference %v", ref)
		}
		if want := TextMediaType; p.GetImage() == nil && ref.GetMediaType() != want {
			t.Fatalf("media type of a text's blob: %q", ref.GetMediaType())
		}
		back, err := resolvedPart(ref, c.data)
		if err != nil || !proto.Equal(back, p) {
			t.Fatalf("%v came back as %v (%v)", p, back, err)
		}
	}
	if got := blobContentOf(TextPart(strings.Repeat("x", 100)), 100); got != nil {
		t.Fatal("a part of exactly the threshold is uploaded")
	}
	if got := blobContentOf(&sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_ToolCall{ToolCall: &sessiondv1.ToolCall{Id: strings.Repeat("x", 200)}}}, 100); got != nil {
		t.Fatal("a tool call is uploaded")
	}

	// An image gets a copy of the (cached) bytes.
	back, _ := resolvedPart(&sessiondv1.BlobRef{Part: sessiondv1.BlobPart_BLOB_PART_IMAGE, MediaType: "image/png"}, image)
	back.GetImage().Data[0] = 9
	if image[0] != 1 {
		t.Fatal("the resolved image shares the cached bytes")
	}
	_, err := resolvedPart(&sessiondv1.BlobRef{Sha256: "ab", Part: sessiondv1.BlobPart_BLOB_PART_TEXT}, []byte{0xff})
	if status.Code(err) != codes.DataLoss {
		t.Fatalf("a text blob that is not UTF-8: %v", err)
	}
	_, err = resolvedPart(&sessiondv1.BlobRef{Sha256: "ab"}, nil)
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "ab") {
		t.Fatalf("a reference to no known part: %v", err)
	}
}

func TestShallowCopySharesAndLeavesTheOriginalAlone(t *testing.T) {
	req := &sessiondv1.AppendRequest{Workspace: "w", Session: "s", Entries: []*sessiondv1.Entry{UserText("a"), UserText("b")}}
	before := proto.Clone(req)
	out := shallowCopy(req)
	if !proto.Equal(out, req) || out.Entries[0] != req.Entries[0] {
		t.Fatalf("copy %v of %v does not share its entries", out, req)
	}
	out.Entries = []*sessiondv1.Entry{UserText("c")}
	out.Session = "t"
	if !proto.Equal(req, before) {
		t.Fatalf("the original changed: %v", req)
	}
}

// putBlobs is a StoreServiceClient whose PutBlob keeps what it is sent and
// records each call (any other method panics: the embedded interface is nil).
type putBlobs struct {
	sessiondv1.StoreServiceClient
	calls []*sessiondv1.PutBlobRequest
	blobs map[string][]byte
}

func (f *putBlobs) PutBlob(_ context.Context, in *sessiondv1.PutBlobRequest, _ ...grpc.CallOption) (*sessiondv1.PutBlobResponse, error) {
	f.calls = append(f.calls, in)
	if f.blobs == nil {
		f.blobs = map[string][]byte{}
	}
	data := append(f.blobs[in.Sha256], in.Data...)
	f.blobs[in.Sha256] = data
	return &sessiondv1.PutBlobResponse{Received: uint64(len(data)), Stored: uint64(len(data)) == in.Size}, nil
}

func TestUploadsOnlyWhatTheRequestCannotCarry(t *testing.T) {
	const MiB = 1024 * 1024
	b := &blobs{uploadOver: DefaultUploadPartsOver}
	ctx := context.Background()
	img := func(n, seed int) *sessiondv1.ContentPart {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*31 + seed)
		}
		return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Image{Image: &sessiondv1.ImagePart{MimeType: "image/png", Data: data}}}
	}
	msg := func(parts ...*sessiondv1.ContentPart) *sessiondv1.Entry {
		return &sessiondv1.Entry{Kind: &sessiondv1.Entry_Message{Message: &sessiondv1.Message{Role: sessiondv1.Role_ROLE_USER, Content: parts}}}
	}
	budget := maxSendBytes(nil) / 2
	if budget != 2*MiB {
		t.Fatalf("the budget without a configured max send size: %d", budget)
	}

	// A 1 MiB image fits: nothing uploaded, the request itself goes.
	one := &sessiondv1.AppendRequest{Workspace: "w", Entries: []*sessiondv1.Entry{msg(TextPart("hi"), img(MiB, 1))}}
	f := &putBlobs{}
	out, err := b.uploadIn(ctx, f, one, budget)
	if err != nil || out != one || len(f.calls) != 0 {
		t.Fatalf("a 1 MiB image: %d PutBlob calls, the request itself %v (%v)", len(f.calls), out == one, err)
	}

	// 1 + 1.5 + 0.75 MiB (3.25, over 2): the 1.5 MiB image alone goes first,
	// in two chunks; the caller's request is left alone.
	small, a, big, c := TextPart(strings.Repeat("ß", 100*1024)), img(MiB, 2), img(3*MiB/2, 3), img(3*MiB/4, 4)
	three := &sessiondv1.AppendRequest{Workspace: "w", Entries: []*sessiondv1.Entry{msg(small, a, big), UserText("between"), msg(c)}}
	before := proto.Clone(three)
	f = &putBlobs{}
	res, err := b.uploadIn(ctx, f, three, budget)
	if err != nil {
		t.Fatal(err)
	}
	sent := res.(*sessiondv1.AppendRequest)
	bigData := big.GetImage().GetData()
	if len(f.calls) != 2 || f.calls[0].Offset != 0 || len(f.calls[0].Data) != MiB ||
		f.calls[1].Offset != MiB || len(f.calls[1].Data) != MiB/2 ||
		f.calls[0].Sha256 != sha256Hex(bigData) || f.calls[0].Workspace != "w" || !bytes.Equal(f.blobs[sha256Hex(bigData)], bigData) {
		t.Fatalf("PutBlob calls %d, want the 1.5 MiB image in two chunks", len(f.calls))
	}
	ref := sent.Entries[0].GetMessage().GetContent()[2].GetBlob()
	if ref.GetSha256() != sha256Hex(bigData) || ref.GetSize() != uint64(len(bigData)) || ref.GetPart() != sessiondv1.BlobPart_BLOB_PART_IMAGE || ref.GetMediaType() != "image/png" {
		t.Fatalf("the 1.5 MiB image was sent as %v", sent.Entries[0].GetMessage().GetContent()[2])
	}
	if got := sent.Entries[0].GetMessage().GetContent(); got[0] != small || got[1] != a || sent.Entries[1] != three.Entries[1] || sent.Entries[2] != three.Entries[2] {
		t.Fatal("parts and entries not uploaded are not the caller's own")
	}
	if !proto.Equal(three, before) || three.Entries[0].GetMessage().GetContent()[2] != big {
		t.Fatal("the caller's request was modified")
	}

	// Half of a configured max send size of 1 MiB (the call's option after
	// the connection's default): the three images, largest first, and not
	// the 200 KiB text (under the 256 KiB a part must exceed).
	budget = maxSendBytes([]grpc.CallOption{grpc.MaxCallSendMsgSize(8 * MiB), grpc.MaxCallRecvMsgSize(1), grpc.MaxCallSendMsgSize(MiB)}) / 2
	if budget != MiB/2 {
		t.Fatalf("the budget of a configured max send size of 1 MiB: %d", budget)
	}
	f = &putBlobs{}
	imp := &sessiondv1.ImportSessionRequest{Workspace: "w", Entries: three.Entries}
	res, err = b.uploadIn(ctx, f, imp, budget)
	if err != nil {
		t.Fatal(err)
	}
	var order []uint64
	for _, call := range f.calls {
		if call.Offset == 0 {
			order = append(order, call.Size)
		}
	}
	if !slices.Equal(order, []uint64{3 * MiB / 2, MiB, 3 * MiB / 4}) || len(f.calls) != 4 {
		t.Fatalf("uploaded blobs of sizes %v in %d calls, want the three images largest first in 4", order, len(f.calls))
	}
	got := res.(*sessiondv1.ImportSessionRequest)
	if got.Entries[0].GetMessage().GetContent()[0] != small || got.Entries[2].GetMessage().GetContent()[0].GetBlob() == nil {
		t.Fatalf("ImportSession sent %v", got.Entries[0].GetMessage().GetContent()[0])
	}
	// Parts over 150 KiB, in a budget of 200 KB: the text too, last (it is
	// 200 KiB of UTF-8, 2 bytes a character).
	f = &putBlobs{}
	b150 := &blobs{uploadOver: 150 * 1024}
	if _, err = b150.uploadIn(ctx, f, imp, 200*1000); err != nil || len(f.calls) != 5 || f.calls[4].Size != 200*1024 {
		t.Fatalf("parts over 150 KiB in a budget of 200 KB: %d PutBlob calls (%v)", len(f.calls), err)
	}
}

// movingPuts is a StoreServiceClient whose PutBlob keeps one upload as the
// server does (a chunk must start at or before the bytes held and not end
// past them when it starts before, else FAILED_PRECONDITION); before the
// call numbered moveAt, another client brings the upload to moveTo bytes.
type movingPuts struct {
	sessiondv1.StoreServiceClient
	data            []byte
	held            uint64
	calls           int
	moveAt          int
	moveTo          uint64
	answers         []string
	refuseEveryTime bool
}

func (f *movingPuts) PutBlob(_ context.Context, in *sessiondv1.PutBlobRequest, _ ...grpc.CallOption) (*sessiondv1.PutBlobResponse, error) {
	f.calls++
	if f.calls == f.moveAt {
		f.held = f.moveTo
	}
	end := in.Offset + uint64(len(in.Data))
	if f.refuseEveryTime && len(in.Data) > 0 || in.Offset > f.held || (in.Offset < f.held && end > f.held) {
		f.answers = append(f.answers, "moved")
		return nil, status.Errorf(codes.FailedPrecondition, "upload holds %d bytes: send the chunk at offset %d, not %d", f.held, f.held, in.Offset)
	}
	if in.Offset == f.held {
		f.held = end
	}
	f.answers = append(f.answers, fmt.Sprint(f.held))
	return &sessiondv1.PutBlobResponse{Received: f.held, Stored: f.held == in.Size}, nil
}

func TestAnUploadMovedOnByAnotherClientGoesOnFromWhatTheServerHolds(t *testing.T) {
	const MiB = 1024 * 1024
	data := make([]byte, 3*MiB+MiB/2)
	for i := range data {
		data[i] = byte(i * 7)
	}
	ctx := context.Background()
	f := &movingPuts{data: data, moveAt: 2, moveTo: 3 * MiB / 2}
	sha, err := upload(ctx, f, "w", data)
	if err != nil || sha != sha256Hex(data) {
		t.Fatalf("upload: %q, %v", sha, err)
	}
	// chunk 0 taken; moved to 1.5 MiB; the chunk at 1 MiB refused; asked: 1.5 MiB; two more chunks.
	want := []string{fmt.Sprint(MiB), "moved", fmt.Sprint(3 * MiB / 2), fmt.Sprint(5 * MiB / 2), fmt.Sprint(7 * MiB / 2)}
	if !slices.Equal(f.answers, want) {
		t.Fatalf("answers %v, want %v", f.answers, want)
	}
	// A server that refuses every chunk: the caller gets FAILED_PRECONDITION after uploadMoves asks.
	stuck := &movingPuts{data: data, refuseEveryTime: true}
	if _, err := upload(ctx, stuck, "w", data); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("refused every time: %v, want FAILED_PRECONDITION", err)
	}
	if stuck.calls != 2*uploadMoves+1 {
		t.Fatalf("refused every time: %d calls, want %d", stuck.calls, 2*uploadMoves+1)
	}
}
