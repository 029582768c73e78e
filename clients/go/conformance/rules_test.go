package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := decodeStrict([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMatches(t *testing.T) {
	got := decode(t, `{"entries":[{"id":"a1","seq":"2"},{"id":"a2"}],"headSeq":"3","n":1}`)
	for _, c := range []struct {
		want string
		ok   bool
	}{
		{`{"entries":[{"id":"a1"},{"id":"a2"}],"headSeq":"3"}`, true},
		{`{"n":1.0}`, true},
		{`{"deduplicated":false,"x":"","y":"0","z":[],"o":{},"k":0}`, true}, // defaults match absent keys
		{`{"entries":[{"id":"a1"}]}`, false},                                // lengths differ
		{`{"headSeq":3}`, false},                                            // uint64 is a string
		{`{"deduplicated":true}`, false},
		{`{"entries":{}}`, false},
	} {
		if why := matches(decode(t, c.want), got, true, "response"); (why == "") != c.ok {
			t.Errorf("matches(%s) = %q, want ok=%v", c.want, why, c.ok)
		}
	}
}

func TestSubstituteAndPath(t *testing.T) {
	vars := map[string]any{"ws": "w1", "n": json.Number("7"), "obj": map[string]any{"a": "b"}}
	out, err := substitute(decode(t, `{"a":"${ws}","b":"x-${ws}-${n}","c":"${n}","d":["${obj}"]}`), vars)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonText(out), `{"a":"w1","b":"x-w1-7","c":7,"d":[{"a":"b"}]}`; got != want {
		t.Errorf("substitute = %s, want %s", got, want)
	}
	if _, err := substitute("${nope}", vars); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown name: %v", err)
	}
	v, ok := resolvePath(decode(t, `{"entries":[{"id":"r"}]}`), "entries.0.id")
	if !ok || v != "r" {
		t.Errorf("resolvePath = %v, %v", v, ok)
	}
	if _, ok := resolvePath(decode(t, `{"entries":[]}`), "entries.0.id"); ok {
		t.Error("resolvePath found an element of an empty array")
	}
}

func TestKindOf(t *testing.T) {
	for s, ok := range map[string]bool{
		`{"call":"X.Y","request":{},"expect":{}}`: true,
		`{"restartServer":true}`:                  true,
		`{"call":"X.Y","expectIds":[]}`:           false, // not a call's field
		`{"call":"X.Y","watch":"w"}`:              false, // two kinds
		`{"request":{}}`:                          false, // no kind
		`{"call":"X.Y","request":{},"exepct":{}}`: false, // a typo
	} {
		if _, err := kindOf(decode(t, s).(map[string]any)); (err == nil) != ok {
			t.Errorf("kindOf(%s): %v", s, err)
		}
	}
}
