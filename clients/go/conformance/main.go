// Command conformance is the Go client's conformance runner: it runs every
// vector of the shared suite (conformance/README.md at the repository root,
// which is its contract) against a live server through this module's
// client layer, package sessiond: ids chosen before send and retry of
// UNAVAILABLE (the interceptors of sessiond.Dial), the resumable
// WatchEntries and the ReadState paging helper.
//
//	cd clients/go && SESSIOND_ADDR=127.0.0.1:50051 \
//	  CONFORMANCE_VECTORS=$PWD/../../conformance/vectors \
//	  CONFORMANCE_WORKSPACE=conf-go CONFORMANCE_OUT=/tmp/go.json \
//	  go run ./conformance
//
// SESSIOND_RESTART_DIR names the restart handshake's directory (unset: a
// vector that restarts the server fails). The results go to
// CONFORMANCE_OUT, a line per vector to stdout; the exit status is 0 when
// every vector passed, 1 otherwise.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessiond/sessiond/clients/go/sessiond"
)

// results is what CONFORMANCE_OUT receives.
type results struct {
	Runner  string            `json:"runner"`
	Vectors []vectorResult    `json:"vectors"`
	States  map[string]string `json:"states"`
}

type vectorResult struct {
	Name       string `json:"name"`
	Steps      int    `json:"steps"`
	Passed     bool   `json:"passed"`
	FailedStep int    `json:"failedStep,omitempty"` // 1-based
	Error      string `json:"error,omitempty"`
}

func main() {
	os.Exit(run())
}

func run() int {
	env := map[string]string{}
	for _, name := range []string{"SESSIOND_ADDR", "CONFORMANCE_VECTORS", "CONFORMANCE_WORKSPACE", "CONFORMANCE_OUT"} {
		if env[name] = os.Getenv(name); env[name] == "" {
			fmt.Fprintf(os.Stderr, "conformance: %s is not set\n", name)
			return 1
		}
	}
	// Dial does not connect: the first call does, through the retry.
	c, err := sessiond.Dial(context.Background(), env["SESSIOND_ADDR"])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	defer c.Close()
	r := &runner{
		client:     c,
		workspace:  env["CONFORMANCE_WORKSPACE"],
		restartDir: os.Getenv("SESSIOND_RESTART_DIR"),
		states:     map[string]string{},
	}

	files, err := filepath.Glob(filepath.Join(env["CONFORMANCE_VECTORS"], "*.json"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no vectors in %s", env["CONFORMANCE_VECTORS"])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	sort.Strings(files)
	out := results{Runner: "go", Vectors: []vectorResult{}, States: r.states}
	passed := 0
	for _, f := range files {
		res := r.runVector(f)
		out.Vectors = append(out.Vectors, res)
		if res.Passed {
			passed++
			fmt.Printf("ok   %s (%d steps)\n", res.Name, res.Steps)
		} else if res.FailedStep == 0 { // the file itself is not a vector
			fmt.Printf("FAIL %s: %s\n", res.Name, res.Error)
		} else {
			fmt.Printf("FAIL %s: step %d of %d: %s\n", res.Name, res.FailedStep, res.Steps, res.Error)
		}
	}
	fmt.Printf("go: %d of %d vectors passed\n", passed, len(out.Vectors))

	b, err := json.MarshalIndent(out, "", " ")
	if err == nil {
		err = os.WriteFile(env["CONFORMANCE_OUT"], append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 1
	}
	if passed != len(out.Vectors) {
		return 1
	}
	return 0
}

// runner holds what lives across vectors: the one client (so that its
// connection, like an application's, lives through server restarts), the
// recorded states and the restart count.
type runner struct {
	client     *sessiond.Client
	workspace  string
	restartDir string
	restarts   int
	states     map[string]string
}

// vector is a vector file. Steps stay raw JSON values until their
// placeholders are substituted, just before each step runs.
type vector struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Steps       []map[string]any `json:"steps"`
}

// runVector runs one vector's steps in order, stopping at the first that
// fails; its watches are closed at the end, whatever happened.
func (r *runner) runVector(path string) vectorResult {
	var v vector
	b, err := os.ReadFile(path)
	if err == nil {
		err = decodeStrict(b, &v)
	}
	if v.Name == "" {
		v.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	}
	if err != nil {
		return vectorResult{Name: v.Name, Error: fmt.Sprintf("%s: %v", filepath.Base(path), err)}
	}
	res := vectorResult{Name: v.Name, Steps: len(v.Steps), Passed: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the watches still open
	run := &vectorRun{runner: r, ctx: ctx, name: v.Name,
		vars: map[string]any{"ws": r.workspace}, watches: map[string]*sessiond.Watcher{}}
	for i, raw := range v.Steps {
		if err := run.step(raw); err != nil {
			res.Passed, res.FailedStep, res.Error = false, i+1, err.Error()
			break
		}
	}
	return res
}

// restart asks the orchestrator to restart the server (the README's
// handshake): an empty restart-<n>.request, then restart-<n>.done within
// 60 s.
func (r *runner) restart() error {
	if r.restartDir == "" {
		return fmt.Errorf("no restart handshake (SESSIOND_RESTART_DIR unset)")
	}
	r.restarts++
	req := filepath.Join(r.restartDir, fmt.Sprintf("restart-%d.request", r.restarts))
	if err := os.WriteFile(req, nil, 0o644); err != nil {
		return err
	}
	done := filepath.Join(r.restartDir, fmt.Sprintf("restart-%d.done", r.restarts))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(done); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("restart %d not done within 60 s", r.restarts)
		}
	}
}
