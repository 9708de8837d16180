package schema

import (
	"net/url"
	"strconv"
	"strings"
)

// Validation cost model.
//
// A schema can make validation exponential: recursive references with
// several applicators ({"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]})
// multiply the work at every level of the instance, and so do "diamonds"
// of references at one level. The library has no budget, so Compile
// estimates, for each instance depth k, how many subschema evaluations one
// value at depth k may cost (c[k], counting every branch as evaluated), and
// Validate refuses an instance whose estimated total, the sum over its
// values of c[depth], is over Options.MaxCost.
//
// The estimate over-counts (every "properties" entry is assumed to apply to
// every child) and resolves references approximately (a reference it
// cannot place is assumed to point at the root, which over-counts too).

// Keywords whose subschemas apply to the same value, and to its children.
var (
	sameSingle = []string{"not", "if", "then", "else"}
	sameArray  = []string{"allOf", "anyOf", "oneOf"}
	sameMap    = []string{"dependentSchemas", "dependencies"}
	refs       = []string{"$ref", "$dynamicRef", "$recursiveRef"}
	kidSingle  = []string{"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "additionalItems", "unevaluatedItems", "contains"}
	kidArray   = []string{"prefixItems", "items"}
	kidMap     = []string{"properties", "patternProperties"}
	defsMap    = []string{"$defs", "definitions"}
)

// costGraph is the schema as a graph of subschemas (by JSON pointer).
type costGraph struct {
	same    map[string][]string // applies to the same value
	kids    map[string][]string // applies to children
	ids     map[string]string   // $id, $anchor, $dynamicAnchor → pointer
	pending map[string][]string // unresolved references by pointer
}

// levelCosts returns c[0..maxDepth] for the schema doc, saturating at
// limit (a value over limit means "too expensive").
func levelCosts(doc any, maxDepth int, limit float64) []float64 {
	g := &costGraph{same: map[string][]string{}, kids: map[string][]string{}, ids: map[string]string{}, pending: map[string][]string{}}
	g.walk(doc, "")
	for from, rs := range g.pending {
		for _, r := range rs {
			g.same[from] = append(g.same[from], g.resolve(r))
		}
	}
	costs := make([]float64, maxDepth+1)
	level := map[string]float64{"": 1}
	for k := 0; k <= maxDepth; k++ {
		// Close the level under same-value applicators.
		all := map[string]float64{}
		cur := level
		total := 0.0
		for step := 0; len(cur) > 0; step++ {
			next := map[string]float64{}
			for n, c := range cur {
				all[n] += c
				total += c
				for _, m := range g.same[n] {
					next[m] += c
				}
			}
			if total > limit || step > 256 {
				total = limit + 1
				break
			}
			cur = next
		}
		costs[k] = total
		if total > limit {
			for j := k + 1; j <= maxDepth; j++ {
				costs[j] = limit + 1
			}
			break
		}
		level = map[string]float64{}
		for n, c := range all {
			for _, m := range g.kids[n] {
				level[m] += c
			}
		}
		if len(level) == 0 {
			break
		}
	}
	return costs
}

// walk registers the subschema v at pointer ptr and its edges.
func (g *costGraph) walk(v any, ptr string) {
	obj, ok := v.(map[string]any)
	if !ok {
		return // boolean schema (or not a schema): no edges
	}
	for _, k := range []string{"$id", "id", "$anchor", "$dynamicAnchor"} {
		if s, ok := obj[k].(string); ok {
			g.ids[strings.TrimSuffix(s, "#")] = ptr
			if k == "$anchor" || k == "$dynamicAnchor" {
				g.ids["#"+s] = ptr
			}
		}
	}
	sub := func(kw string) string { return ptr + "/" + escapePtr(kw) }
	for _, kw := range sameSingle {
		if s, ok := obj[kw]; ok {
			g.edge(g.same, ptr, sub(kw), s)
		}
	}
	g.inArrays(g.same, obj, ptr, sameArray)
	g.inMaps(g.same, obj, ptr, sameMap, true)
	for _, kw := range refs {
		if r, ok := obj[kw].(string); ok {
			g.pending[ptr] = append(g.pending[ptr], r)
		}
	}
	for _, kw := range kidSingle {
		if s, ok := obj[kw]; ok {
			if _, isArr := s.([]any); !isArr {
				g.edge(g.kids, ptr, sub(kw), s)
			}
		}
	}
	g.inArrays(g.kids, obj, ptr, kidArray)
	g.inMaps(g.kids, obj, ptr, kidMap, false)
	g.inMaps(nil, obj, ptr, defsMap, false)
}

// edge adds an edge from ptr to the subschema s at pointer p in edges (no
// edge where edges is nil: $defs are only walked) and walks s.
func (g *costGraph) edge(edges map[string][]string, ptr, p string, s any) {
	if edges != nil {
		edges[ptr] = append(edges[ptr], p)
	}
	g.walk(s, p)
}

// inArrays is edge for each subschema in an array under the keywords kws
// of obj.
func (g *costGraph) inArrays(edges map[string][]string, obj map[string]any, ptr string, kws []string) {
	for _, kw := range kws {
		if arr, ok := obj[kw].([]any); ok {
			for i, s := range arr {
				g.edge(edges, ptr, ptr+"/"+escapePtr(kw)+"/"+strconv.Itoa(i), s)
			}
		}
	}
}

// inMaps is edge for each value in an object under the keywords kws of
// obj; with objectsOnly, for the values that are objects (the
// "dependencies" of draft 7 hold arrays of names too).
func (g *costGraph) inMaps(edges map[string][]string, obj map[string]any, ptr string, kws []string, objectsOnly bool) {
	for _, kw := range kws {
		if m, ok := obj[kw].(map[string]any); ok {
			for name, s := range m {
				if _, isSchema := s.(map[string]any); isSchema || !objectsOnly {
					g.edge(edges, ptr, ptr+"/"+escapePtr(kw)+"/"+escapePtr(name), s)
				}
			}
		}
	}
}

// resolve maps a reference to a pointer, falling back to the root.
func (g *costGraph) resolve(ref string) string {
	base, frag, hasFrag := strings.Cut(ref, "#")
	if base == "" && hasFrag {
		if strings.HasPrefix(frag, "/") {
			if f, err := url.PathUnescape(frag); err == nil {
				return strings.TrimSuffix(f, "/")
			}
			return frag
		}
		if frag == "" {
			return ""
		}
		if p, ok := g.ids["#"+frag]; ok {
			return p
		}
		return ""
	}
	if p, ok := g.ids[base]; ok {
		if strings.HasPrefix(frag, "/") {
			return p + frag
		}
		return p
	}
	for id, p := range g.ids { // relative $id written differently from the reference
		if strings.HasSuffix(id, "/"+base) || strings.HasSuffix(base, "/"+id) {
			return p
		}
	}
	return ""
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// instanceCost is the estimated number of evaluations to validate v with
// per-depth costs c: the sum over v's values of c[depth].
func instanceCost(v any, c []float64, depth int) float64 {
	if depth >= len(c) {
		return 0
	}
	total := c[depth]
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			total += instanceCost(e, c, depth+1)
		}
	case []any:
		for _, e := range t {
			total += instanceCost(e, c, depth+1)
		}
	}
	return total
}
