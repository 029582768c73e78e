// Command example creates a session, appends, reads the state, forks and
// watches a few entries. Usage: go run ./example 127.0.0.1:50051
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/sessiond/sessiond/clients/go/sessiond"
	pb "github.com/sessiond/sessiond/clients/go/sessiondv1"
)

func must(err error) {
	if err != nil {
		log.Fatal(err) // a gRPC status error: status.Code(err) gives its code
	}
}

func main() {
	ctx := context.Background()
	c, err := sessiond.Dial(ctx, os.Args[1]) // + sessiond.WithToken(t) when the server wants one
	must(err)
	defer c.Close()
	s, err := c.Store.CreateSession(ctx, &pb.CreateSessionRequest{})
	must(err)
	id := s.Session.Id
	_, err = c.Session.Append(ctx, &pb.AppendRequest{Session: id, Entries: []*pb.Entry{
		sessiond.UserText("What is 2+2?"), sessiond.AssistantText("4")}})
	must(err)
	st, err := c.Session.GetState(ctx, &pb.GetStateRequest{Session: id})
	must(err)
	for _, m := range st.State.Messages {
		fmt.Printf("%s: %s\n", m.Message.Role, sessiond.TextOf(m.Message))
	}
	fork, err := c.Store.ForkSession(ctx, &pb.ForkSessionRequest{Session: id})
	must(err)
	fmt.Println("forked", id, "->", fork.Session.Id)
	w := c.WatchEntries(ctx, &pb.WatchEntriesRequest{Session: id})
	defer w.Close()
	for seq := uint64(0); seq < 3; {
		ev, err := w.Next()
		must(err)
		if e := ev.GetEntry(); e != nil {
			seq = e.Seq
			fmt.Printf("seq %d: %s %s\n", e.Seq, e.Id, sessiond.TextOf(e.GetMessage()))
		}
	}
}
