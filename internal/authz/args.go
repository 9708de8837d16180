package authz

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/cedar-policy/cedar-go"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// argUse is what a policy reads of context.arguments: the members it
// names (context.arguments.NAME, context.arguments["NAME"],
// context.arguments has NAME), or the whole value (whole), when it uses
// context.arguments, or context itself, in any other way (compares it,
// tests its type, puts it in a record or set...); and which of the
// context's other members it names (ctx), all of them when it uses
// context itself as a value.
//
// A policy can only read a member it names: the arguments of a request
// are converted to Cedar values only as far as the policies evaluated
// name them (project), the context holds only the members they name,
// and the other members, which no evaluation can reach, are left out.
// RATIONALE.md: "Only the argument members a policy names are
// converted".
type argUse struct {
	whole bool
	names []string
	ctx   ctxMembers
}

// ctxMembers is a set of the context's members other than arguments.
type ctxMembers uint8

const (
	ctxTransport ctxMembers = 1 << iota
	ctxProtocolVersion
	ctxTime
	ctxListing
	ctxAll = ctxTransport | ctxProtocolVersion | ctxTime | ctxListing
)

// ctxMember is the member of the context named attr (0 for arguments
// and for a name the context does not have).
func ctxMember(attr string) ctxMembers {
	switch attr {
	case "transport":
		return ctxTransport
	case "protocolVersion":
		return ctxProtocolVersion
	case "time":
		return ctxTime
	case "listing":
		return ctxListing
	}
	return 0
}

// add merges o into u.
func (u *argUse) add(o argUse) {
	u.whole = u.whole || o.whole
	u.ctx |= o.ctx
	for _, n := range o.names {
		if !slices.Contains(u.names, n) {
			u.names = append(u.names, n)
		}
	}
}

// argUseOf reads the argument members a policy names from its JSON form
// (Cedar's JSON policy format); anything it cannot read is whole.
func argUseOf(pol *cedar.Policy) argUse {
	b, err := pol.MarshalJSON()
	if err != nil {
		return argUse{whole: true, ctx: ctxAll}
	}
	var js struct {
		Conditions []struct {
			Body any `json:"body"`
		} `json:"conditions"`
	}
	if json.Unmarshal(b, &js) != nil {
		return argUse{whole: true, ctx: ctxAll}
	}
	var u argUse
	for _, c := range js.Conditions {
		walkArgUse(c.Body, &u)
	}
	return u
}

// walkArgUse records in u what the expression n (a node of Cedar's JSON
// policy format) reads of context.arguments. Every node is an object of
// one key; the only uses it accepts as naming a member are
// `.`/`has` with a literal attr on context.arguments, and `.`/`has` on
// context with an attr other than arguments (and `has arguments`); any
// other occurrence of the variable context makes u whole.
func walkArgUse(n any, u *argUse) {
	switch n := n.(type) {
	case []any:
		for _, e := range n {
			walkArgUse(e, u)
		}
	case map[string]any:
		if len(n) == 1 {
			if _, ok := n["Value"]; ok {
				return // a literal: no variables
			}
			if rec, ok := n["Record"].(map[string]any); ok {
				// A record literal: its keys are the policy's, its
				// values expressions.
				for _, v := range rec {
					walkArgUse(v, u)
				}
				return
			}
			if v, ok := n["Var"]; ok {
				if v == "context" {
					u.whole, u.ctx = true, ctxAll // context as a value
				}
				return
			}
			for _, op := range [...]string{".", "has"} {
				if acc, ok := accessOf(n[op]); ok {
					switch {
					case isContextArguments(acc.left):
						u.add(argUse{names: []string{acc.attr}})
					case isVar(acc.left, "context"):
						if op == "." && acc.attr == "arguments" {
							u.whole = true // context.arguments as a value
						}
						u.ctx |= ctxMember(acc.attr)
					default:
						walkArgUse(acc.left, u)
					}
					return
				}
			}
		}
		for _, v := range n {
			walkArgUse(v, u)
		}
	}
}

// access is the operand of `.` or `has`: {"left": node, "attr": "name"}.
type access struct {
	left any
	attr string
}

func accessOf(n any) (access, bool) {
	m, ok := n.(map[string]any)
	if !ok || len(m) != 2 {
		return access{}, false
	}
	attr, ok := m["attr"].(string)
	left, lok := m["left"]
	if !ok || !lok {
		return access{}, false
	}
	return access{left, attr}, true
}

func isVar(n any, name string) bool {
	m, ok := n.(map[string]any)
	return ok && len(m) == 1 && m["Var"] == name
}

// isContextArguments reports whether n is context.arguments.
func isContextArguments(n any) bool {
	m, ok := n.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	acc, ok := accessOf(m["."])
	return ok && acc.attr == "arguments" && isVar(acc.left, "context")
}

// project converts the members of the arguments object raw that names
// lists, as valueOfJSON converts them (nulls left out, the last of a
// repeated member kept), and reports how many it kept. It gives the
// answer valueOfJSON would give for a policy that reads only those
// members, errors included: invalid JSON is refused alike; anything
// whose other members valueOfJSON could refuse (nesting deeper than it
// converts), or that is not an object, is converted whole (n is then
// -1).
func project(raw json.RawMessage, names []string) (v cedar.Value, n int, err error) {
	if !jsonscan.Valid(raw) {
		v, err := valueOfJSON(raw) // its error
		return v, -1, err
	}
	if jsonscan.Kind(raw) != 'o' || nesting(raw) > maxDepth {
		v, err := valueOf(raw, 0)
		return v, -1, err
	}
	if len(names) == 0 {
		return emptyArgs, 0, nil
	}
	var rec cedar.RecordMap
	err = members(raw, func(k, e []byte) error {
		key, named := "", false
		if bytes.IndexByte(k, '\\') >= 0 {
			key = memberName(k)
			named = slices.Contains(names, key)
		} else {
			for _, name := range names {
				if string(k) == name {
					key, named = name, true
					break
				}
			}
		}
		if !named {
			return nil
		}
		cv, err := valueOf(e, 1)
		if err != nil {
			return err
		}
		if rec == nil {
			rec = cedar.RecordMap{}
		}
		rec[cedar.String(key)] = cv
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(rec) == 0 {
		return emptyArgs, 0, nil
	}
	return cedar.NewRecord(rec), len(rec), nil
}

// nesting returns the deepest nesting of containers in the valid JSON
// raw (1 for `{}`). valueOf refuses a value nested more than maxDepth
// levels; with nesting(raw) <= maxDepth no value is.
func nesting(raw []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			i = jsonscan.StringEnd(raw, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
