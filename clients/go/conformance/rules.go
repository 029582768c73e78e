package main

// The language-neutral rules of conformance/README.md: `${name}`
// placeholders, `expect` matching against proto JSON, and `save` paths.
// JSON values here are what encoding/json decodes with UseNumber: nil, bool,
// json.Number, string, []any and map[string]any. Numbers stay json.Number so
// that a request re-encoded after substitution keeps its literal text.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	wholePlaceholder = regexp.MustCompile(`^\$\{(\w+)\}$`)
	placeholder      = regexp.MustCompile(`\$\{(\w+)\}`)
)

// substitute replaces placeholders in every string of v: a string that is
// exactly "${name}" by the value itself (whatever its type), one inside a
// longer string by the value's text. An unknown name is an error.
func substitute(v any, vars map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if m := wholePlaceholder.FindStringSubmatch(x); m != nil {
			return lookup(vars, m[1])
		}
		var err error
		out := placeholder.ReplaceAllStringFunc(x, func(p string) string {
			val, e := lookup(vars, p[2:len(p)-1])
			if e != nil {
				err = e
				return p
			}
			return text(val)
		})
		return out, err
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := substitute(e, vars)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			s, err := substitute(e, vars)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	return v, nil
}

func lookup(vars map[string]any, name string) (any, error) {
	v, ok := vars[name]
	if !ok {
		return nil, fmt.Errorf("${%s} is not set", name)
	}
	return v, nil
}

// text is a value as it appears inside a longer string: a string as is,
// anything else as its JSON.
func text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// isDefault tells the values that also match an absent key: proto JSON
// printers leave fields with default values out.
func isDefault(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case string:
		return x == "" || x == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// matches compares got (present = the key exists) with want, as the
// README's Matching rules say: objects by the keys of want, arrays element
// by element with equal lengths, anything else by equality. It returns ""
// on a match, else where and how they differ (at names the place).
func matches(want, got any, present bool, at string) string {
	if !present {
		if isDefault(want) {
			return ""
		}
		return at + ": missing"
	}
	switch w := want.(type) {
	case []any:
		g, ok := got.([]any)
		if !ok {
			return at + ": expected an array"
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: expected %d elements, got %d", at, len(w), len(g))
		}
		for i := range w {
			if why := matches(w[i], g[i], true, fmt.Sprintf("%s[%d]", at, i)); why != "" {
				return why
			}
		}
		return ""
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return at + ": expected an object"
		}
		for k, wv := range w {
			gv, ok := g[k]
			if why := matches(wv, gv, ok, at+"."+k); why != "" {
				return why
			}
		}
		return ""
	case json.Number:
		// Numbers compare by value (1 and 1.0 are the same JSON number).
		if g, ok := got.(json.Number); ok {
			wf, err1 := w.Float64()
			gf, err2 := g.Float64()
			if err1 == nil && err2 == nil && wf == gf {
				return ""
			}
		}
	default: // nil, bool, string: comparable, so == cannot panic
		if want == got {
			return ""
		}
	}
	return fmt.Sprintf("%s: expected %s, got %s", at, text(want), jsonText(got))
}

// jsonText is v as JSON (strings quoted), for error messages.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// resolvePath returns the value at a dotted path ("entries.0.id"): keys of
// objects, indices of arrays.
func resolvePath(v any, path string) (any, bool) {
	cur := v
	for _, part := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[part]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
