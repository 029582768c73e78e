package sessiond

import (
	"context"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// GetTree and GetState answer in pages once a tree or state outgrows one
// response (see the proto). ReadTree and ReadState read every page and
// return one response, as an unpaged call would: all pages describe the
// snapshot of the first, so the result is consistent even while entries are
// appended. A page_token in req is ignored: reading starts at the first
// page. req itself is not modified.

// stuck is the error for a page that brings nothing yet promises more,
// which would make the loop endless.
func stuck(method string) error {
	return status.Errorf(codes.Internal, "%s: the server sent an empty page with a next page token", method)
}

// ReadTree returns every node of a session's tree: GetTree, page after page,
// merged into the first response (next_page_token empty).
func (c *Client) ReadTree(ctx context.Context, req *sessiondv1.GetTreeRequest, opts ...grpc.CallOption) (*sessiondv1.GetTreeResponse, error) {
	r := proto.Clone(req).(*sessiondv1.GetTreeRequest)
	r.PageToken = ""
	tree, err := c.Session.GetTree(ctx, r, opts...)
	if err != nil {
		return nil, err
	}
	for tree.NextPageToken != "" {
		r.PageToken = tree.NextPageToken
		page, err := c.Session.GetTree(ctx, r, opts...)
		if err != nil {
			return nil, err
		}
		if len(page.Nodes) == 0 && page.NextPageToken != "" {
			return nil, stuck("GetTree")
		}
		tree.Nodes = append(tree.Nodes, page.Nodes...)
		tree.NextPageToken = page.NextPageToken
	}
	return tree, nil
}

// ReadState returns a session's whole state: GetState, page after page,
// messages merged into the first response (next_page_token empty).
func (c *Client) ReadState(ctx context.Context, req *sessiondv1.GetStateRequest, opts ...grpc.CallOption) (*sessiondv1.GetStateResponse, error) {
	r := proto.Clone(req).(*sessiondv1.GetStateRequest)
	r.PageToken = ""
	res, err := c.Session.GetState(ctx, r, opts...)
	if err != nil {
		return nil, err
	}
	for res.NextPageToken != "" {
		r.PageToken = res.NextPageToken
		page, err := c.Session.GetState(ctx, r, opts...)
		if err != nil {
			return nil, err
		}
		more := page.GetState().GetMessages()
		if len(more) == 0 && page.NextPageToken != "" {
			return nil, stuck("GetState")
		}
		if res.State != nil {
			res.State.Messages = append(res.State.Messages, more...)
		}
		res.NextPageToken = page.NextPageToken
	}
	return res, nil
}
