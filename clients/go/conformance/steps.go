package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiond"
	pb "github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

const (
	// stepTimeout bounds each unary step (its retries included), so that a
	// server that stops answering fails the step instead of hanging the run.
	stepTimeout = 60 * time.Second
	// watchTimeout is how long a watchNext step waits for its entries.
	watchTimeout = 30 * time.Second
)

// kinds maps the key that names a step's kind to the other keys such a step
// may have (conformance/README.md, Steps). Any other key is an error, so
// that a misspelt "expect" fails instead of checking nothing.
var kinds = map[string][]string{
	"call":          {"request", "expect", "expectError", "expectMessageContains", "save", "state", "repeat"},
	"readState":     {"request", "expect", "save", "state"},
	"readAll":       {"request", "expectIds"},
	"watch":         {"request"},
	"watchNext":     {"expectIds"},
	"watchClose":    {},
	"restartServer": {},
}

// step is a step after its placeholders were substituted. The kind's own
// key is read from the raw step (kindOf); request stays JSON for protojson.
type step struct {
	Call                  string            `json:"call"`
	ReadState             json.RawMessage   `json:"readState"`
	ReadAll               string            `json:"readAll"`
	Watch                 string            `json:"watch"`
	WatchNext             string            `json:"watchNext"`
	WatchClose            string            `json:"watchClose"`
	RestartServer         json.RawMessage   `json:"restartServer"`
	Request               json.RawMessage   `json:"request"`
	Expect                json.RawMessage   `json:"expect"`
	ExpectError           string            `json:"expectError"`
	ExpectMessageContains string            `json:"expectMessageContains"`
	Save                  map[string]string `json:"save"`
	State                 string            `json:"state"`
	Repeat                int               `json:"repeat"`
	ExpectIds             *[]string         `json:"expectIds"`
}

// vectorRun is one vector in progress: its saved values (`${ws}` among
// them) and its open watches, which end with ctx.
type vectorRun struct {
	*runner
	ctx     context.Context
	name    string
	vars    map[string]any
	watches map[string]*sessiond.Watcher
}

// decodeStrict decodes JSON into v, refusing unknown fields and keeping
// numbers as json.Number.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// kindOf returns the key naming the step's kind: exactly one, and no key
// that kind does not take.
func kindOf(raw map[string]any) (string, error) {
	var found []string
	for k := range raw {
		if _, ok := kinds[k]; ok {
			found = append(found, k)
		}
	}
	sort.Strings(found)
	if len(found) != 1 {
		return "", fmt.Errorf("a step needs exactly one kind key, got %v", found)
	}
	kind := found[0]
	for k := range raw {
		if k != kind && !slices.Contains(kinds[kind], k) {
			return "", fmt.Errorf("a %s step has no field %q", kind, k)
		}
	}
	return kind, nil
}

// step runs one step; an error fails it.
func (v *vectorRun) step(raw map[string]any) error {
	kind, err := kindOf(raw)
	if err != nil {
		return err
	}
	sub, err := substitute(raw, v.vars)
	if err != nil {
		return err
	}
	b, err := json.Marshal(sub)
	if err != nil {
		return err
	}
	var s step
	if err := decodeStrict(b, &s); err != nil {
		return fmt.Errorf("step: %v", err)
	}
	if needs := map[string]bool{"call": true, "readState": true, "readAll": true, "watch": true}; needs[kind] && s.Request == nil {
		return fmt.Errorf("a %s step needs a request", kind)
	}
	if (kind == "readAll" || kind == "watchNext") && s.ExpectIds == nil {
		return fmt.Errorf("a %s step needs expectIds", kind)
	}

	switch kind {
	case "call":
		return v.call(&s)
	case "readState":
		return v.readState(&s)
	case "readAll":
		return v.readAll(&s)
	case "watch":
		req := &pb.WatchEntriesRequest{}
		if err := parseRequest(s.Request, req); err != nil {
			return err
		}
		if _, open := v.watches[s.Watch]; open {
			return fmt.Errorf("watch %q is already open", s.Watch)
		}
		// The client's resumable watch: it reconnects after a broken stream
		// (a server restart) from the last entry it delivered.
		v.watches[s.Watch] = v.client.WatchEntries(v.ctx, req)
		return nil
	case "watchNext":
		w, ok := v.watches[s.WatchNext]
		if !ok {
			return fmt.Errorf("no open watch %q", s.WatchNext)
		}
		got, err := nextIDs(w, len(*s.ExpectIds))
		if err != nil {
			return err
		}
		return sameIDs(*s.ExpectIds, got)
	case "watchClose":
		w, ok := v.watches[s.WatchClose]
		if !ok {
			return fmt.Errorf("no open watch %q", s.WatchClose)
		}
		w.Close()
		delete(v.watches, s.WatchClose)
		return nil
	default: // restartServer
		if string(s.RestartServer) != "true" {
			return fmt.Errorf("restartServer must be true")
		}
		return v.restart()
	}
}

// services are the generated descriptors of both services, by the name a
// step's "Service.Method" uses.
var services = map[string]protoreflect.ServiceDescriptor{
	"StoreService":   pb.File_sessiond_v1_store_service_proto.Services().ByName("StoreService"),
	"SessionService": pb.File_sessiond_v1_session_service_proto.Services().ByName("SessionService"),
}

// unaryMethod looks "Service.Method" up in the generated descriptors and
// returns its gRPC path ("/sessiond.v1.SessionService/Append").
func unaryMethod(name string) (protoreflect.MethodDescriptor, string, error) {
	svc, rpc, _ := strings.Cut(name, ".")
	sd, ok := services[svc]
	var md protoreflect.MethodDescriptor
	if ok {
		md = sd.Methods().ByName(protoreflect.Name(rpc))
	}
	if md == nil || md.IsStreamingClient() || md.IsStreamingServer() {
		return nil, "", fmt.Errorf("unknown unary method %s", name)
	}
	return md, "/" + string(sd.FullName()) + "/" + string(md.Name()), nil
}

// newMessage returns an empty message of the generated Go type (sessiondv1
// registers them), not a dynamicpb one: sessiond.FillIDs recognises the
// requests whose ids it fills by their Go type.
func newMessage(md protoreflect.MessageDescriptor) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		return nil, err
	}
	return mt.New().Interface(), nil
}

// parseRequest reads a request's canonical proto JSON, strictly (an unknown
// field is an error: protojson's default).
func parseRequest(b json.RawMessage, m proto.Message) error {
	if err := protojson.Unmarshal(b, m); err != nil {
		return fmt.Errorf("request: %v", err)
	}
	return nil
}

// call runs a unary RPC through the client's connection: Invoke on it is
// what the generated stubs (c.Store, c.Session) do, so every attempt passes
// the interceptors sessiond.Dial installed: ids filled in before the first
// send, then retry of UNAVAILABLE. With repeat, the same request message is
// sent again: it already holds the ids the first send chose, so these are
// the retries the server must de-duplicate.
func (v *vectorRun) call(s *step) error {
	md, path, err := unaryMethod(s.Call)
	if err != nil {
		return err
	}
	req, err := newMessage(md.Input())
	if err != nil {
		return err
	}
	if err := parseRequest(s.Request, req); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(v.ctx, stepTimeout)
	defer cancel()
	var res proto.Message
	for i := 0; i <= s.Repeat; i++ {
		if res, err = newMessage(md.Output()); err != nil {
			return err
		}
		if err = v.client.Conn().Invoke(ctx, path, req, res); err != nil {
			break
		}
	}
	if s.ExpectError != "" {
		return checkError(s, err)
	}
	if err != nil {
		return statusError(err)
	}
	return v.finish(s, res)
}

// readState reads every page of GetState through the client's paging
// helper, then checks and records the merged response as a call would.
func (v *vectorRun) readState(s *step) error {
	req := &pb.GetStateRequest{}
	if err := parseRequest(s.Request, req); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(v.ctx, stepTimeout)
	defer cancel()
	res, err := v.client.ReadState(ctx, req)
	if err != nil {
		return statusError(err)
	}
	return v.finish(s, res)
}

// readAll pages to the end and compares the ids read with expectIds:
// GetEntries by after_seq (the last seq read) until a page is empty,
// ListSessions by page token until next_page_token is empty.
func (v *vectorRun) readAll(s *step) error {
	ctx, cancel := context.WithTimeout(v.ctx, stepTimeout)
	defer cancel()
	var ids []string
	switch s.ReadAll {
	case "SessionService.GetEntries":
		req := &pb.GetEntriesRequest{}
		if err := parseRequest(s.Request, req); err != nil {
			return err
		}
		for {
			res, err := v.client.Session.GetEntries(ctx, req)
			if err != nil {
				return statusError(err)
			}
			if len(res.Entries) == 0 {
				break
			}
			for _, e := range res.Entries {
				ids = append(ids, e.Id)
			}
			req.AfterSeq = res.Entries[len(res.Entries)-1].Seq
		}
	case "StoreService.ListSessions":
		req := &pb.ListSessionsRequest{}
		if err := parseRequest(s.Request, req); err != nil {
			return err
		}
		for {
			res, err := v.client.Store.ListSessions(ctx, req)
			if err != nil {
				return statusError(err)
			}
			for _, m := range res.Sessions {
				ids = append(ids, m.Id)
			}
			if res.NextPageToken == "" {
				break
			}
			req.PageToken = res.NextPageToken
		}
	default:
		return fmt.Errorf("readAll: unknown method %s", s.ReadAll)
	}
	return sameIDs(*s.ExpectIds, ids)
}

// finish checks a response against expect, saves values from it and
// records its state, all from its canonical proto JSON (lowerCamelCase
// names, default values left out: protojson's defaults).
func (v *vectorRun) finish(s *step, res proto.Message) error {
	js, err := protojson.Marshal(res)
	if err != nil {
		return err
	}
	var got any
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	if err := d.Decode(&got); err != nil {
		return err
	}
	if s.Expect != nil {
		var want any
		if err := decodeStrict(s.Expect, &want); err != nil {
			return fmt.Errorf("expect: %v", err)
		}
		if why := matches(want, got, true, "response"); why != "" {
			return fmt.Errorf("%s; response %s", why, jsonText(got))
		}
	}
	for name, path := range s.Save {
		val, ok := resolvePath(got, path)
		if !ok {
			return fmt.Errorf("save: %s is not in %s", path, jsonText(got))
		}
		v.vars[name] = val
	}
	if s.State != "" {
		sr, ok := res.(interface{ GetState() *pb.SessionState })
		if !ok || sr.GetState() == nil {
			return fmt.Errorf("state %q: the response has no state", s.State)
		}
		// Deterministic: map keys sorted, the bytes every runner must
		// produce for the same state.
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(sr.GetState())
		if err != nil {
			return err
		}
		v.states[v.name+"/"+s.State] = base64.StdEncoding.EncodeToString(b)
	}
	return nil
}

// nextIDs reads entries from a watch (heartbeats skipped) until it has n,
// for watchTimeout at most. Watcher.Next blocks, so it runs in a goroutine;
// on timeout the watch is closed, which ends that Next with CANCELED.
func nextIDs(w *sessiond.Watcher, n int) ([]string, error) {
	type result struct {
		ids []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var ids []string
		for len(ids) < n {
			ev, err := w.Next()
			if err != nil {
				done <- result{ids, err}
				return
			}
			if e := ev.GetEntry(); e != nil {
				ids = append(ids, e.Id)
			}
		}
		done <- result{ids, nil}
	}()
	t := time.NewTimer(watchTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("watch: after %d of %d entries: %w", len(r.ids), n, statusError(r.err))
		}
		return r.ids, nil
	case <-t.C:
		w.Close()
		r := <-done
		return nil, fmt.Errorf("watch: %d of %d entries within %s", len(r.ids), n, watchTimeout)
	}
}

func sameIDs(want, got []string) error {
	if !slices.Equal(want, got) {
		return fmt.Errorf("expected ids %s, got %s", jsonText(want), jsonText(got))
	}
	return nil
}

// checkError passes when the call failed with the expected code (and a
// message holding expectMessageContains).
func checkError(s *step, err error) error {
	if err == nil {
		return fmt.Errorf("expected %s, got OK", s.ExpectError)
	}
	st := status.Convert(err)
	if code := codeName(st.Code()); code != s.ExpectError {
		return fmt.Errorf("expected %s, got %s: %s", s.ExpectError, code, st.Message())
	}
	if !strings.Contains(st.Message(), s.ExpectMessageContains) {
		return fmt.Errorf("the %s message %q does not name %q", s.ExpectError, st.Message(), s.ExpectMessageContains)
	}
	return nil
}

// statusError describes a failed call as "CODE: message".
func statusError(err error) error {
	st := status.Convert(err)
	return fmt.Errorf("%s: %s", codeName(st.Code()), st.Message())
}

// codeNames are the gRPC code names as the vectors spell them (grpc-go's
// Code.String is CamelCase).
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

func codeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return c.String()
}
