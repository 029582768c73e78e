package sessiond

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
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
