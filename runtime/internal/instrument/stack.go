package instrument

// The stack budget bounds the wasm stack of a recursion, which wazero
// grows on the Go heap, doubling it, up to a constant ceiling (a 50 MB
// stack, about 160 MiB allocated per overflowing call, whatever the
// module's memory limit). Only calls that close a cycle of the call graph
// pay for it: the back edges of a depth-first search of the graph
// (call_indirect counts as a call of a node for the tables, which calls
// every function a table or a funcref can hold; the search starts there,
// so that every back edge is a call). Every cycle has a back edge, so the
// other calls form a DAG, and a stack is a run of uncharged calls, a
// charged call, another run, and so on. Each charged call charges its
// caller's frame plus the longest chain of uncharged calls that can lead
// to it (the run below it), frames estimated by StackFrame, before the
// call and gives it back after; the stack is then bounded by the budget
// plus the run from the entry point, a part fixed by the module. The
// search, not the components of the graph, picks the charged calls
// because in Go modules most calls are inside one large component (2055
// back edges of 20664 calls in the Go test plugin, 7289 calls within
// components): charging every call within it cost a Go plugin's call
// round trip 4%, the back edges nothing measurable. A back edge's charge
// is larger (up to about 10 KB there), which is why the budget is 16 MiB.
//
//	global.get $stack
//	i32.const  <frame>
//	i32.sub
//	global.set $stack
//	call …
//	global.get $stack
//	i32.const  <frame>
//	i32.add
//	global.set $stack
//
// The budget is checked in the slow path, not at the call (a compare and
// a branch per call cost recursive Fibonacci 13%, against 11% without):
// once $stack is negative, the next exit traps (unreachable, and the host
// sees $stack < 0). So that a recursion cannot push much more than the
// budget before that exit, the entry check of a function with a charged
// call also charges the fuel for that call's charge, one byte of fuel per
// StackPerFuel bytes: between two exits the frames pushed stay under
// Refill*StackPerFuel estimated bytes.
//
// A call that traps or exits never gives its charge back; the host
// discards such an instance, and stores Stack before each call anyway.

// StackPerFuel is how many estimated bytes of frame a recursive
// function's entry charges as one byte of fuel (see above): the
// overshoot past the budget stays under Refill*StackPerFuel (4 MiB).
const StackPerFuel = 64

// StackFrame is the estimated size in bytes of a frame of a function
// with the given number of parameters and locals: wazero keeps locals in
// registers and spills those live across a call, 8 bytes each, besides
// a return address and a frame pointer. An estimate, not a measure: a
// frame whose operand stack holds many values across the call is
// larger; wazero's own ceiling still bounds those.
func StackFrame(locals uint64) uint64 {
	return 32 + 8*locals
}

// maxFrame bounds a charge (an i32 immediate); a larger estimate is
// charged as the whole budget, so one such call overflows.
const maxFrame = Stack

// site is a call in a function body: the call or call_indirect
// instruction at p[at:end] of the code section, its callee (a function
// index; for call_indirect, indirect is set), and whether it is charged
// to the stack budget (see the file's doc).
type site struct {
	at, end  int
	callee   uint32
	indirect bool
	charged  bool
}

// chargeSites marks the calls that close a cycle and sets each body's
// charge (see the file's doc). Nodes 0..n-1 are the defined functions,
// node n the tables: call_indirect calls it, and it calls every function
// whose reference the module takes (element segments, ref.func, and the
// exports if it imports a table).
func chargeSites(m *module, bodies []body) {
	n := len(bodies)
	if n == 0 {
		return
	}
	tables := uint32(n)
	taken := m.taken
	if m.importTables > 0 {
		taken = append(taken[:len(taken):len(taken)], m.exportFuncs...)
	}
	sites := func(k int) []site { return m.sites[bodies[k].firstSite : bodies[k].firstSite+bodies[k].nSites] }
	// graph builds the edges of each node as a CSR, succ[first[v]:first[v+1]]:
	// the calls each site makes (edge reports whether it has one and to
	// which node), then the tables' if withTables.
	graph := func(edge func(s *site) (uint32, bool), withTables bool) (first, succ []uint32) {
		first = make([]uint32, n+2)
		for k := range n {
			first[k+1] = first[k]
			for q := range sites(k) {
				if _, ok := edge(&sites(k)[q]); ok {
					first[k+1]++
				}
			}
		}
		first[n+1] = first[n]
		if withTables {
			for _, f := range taken {
				if f >= m.importFuncs {
					first[n+1]++
				}
			}
		}
		succ = make([]uint32, 0, first[n+1])
		for k := range n {
			for q := range sites(k) {
				if w, ok := edge(&sites(k)[q]); ok {
					succ = append(succ, w)
				}
			}
		}
		if withTables {
			for _, f := range taken {
				if f >= m.importFuncs {
					succ = append(succ, f-m.importFuncs)
				}
			}
		}
		return first, succ
	}
	call := func(s *site) (uint32, bool) {
		switch {
		case s.indirect:
			return tables, true
		case s.callee >= m.importFuncs:
			return s.callee - m.importFuncs, true
		}
		return 0, false
	}
	// The back edges of a depth-first search are charged: every cycle has
	// one. The search starts at the tables, so that no edge out of them
	// (which is no call) is a back edge: an edge into them, a
	// call_indirect, is.
	first, succ := graph(call, true)
	back := backEdges(first, succ, tables)
	e := 0
	for k := range n {
		for q := range sites(k) {
			if _, ok := call(&sites(k)[q]); ok {
				sites(k)[q].charged = back[e]
				e++
			}
		}
	}
	// Every cycle has a charged call, so the uncharged calls are a DAG; a
	// charged call's charge is its caller's frame plus the longest chain
	// of uncharged calls that leads to it (whose frames are on the stack
	// below it, uncharged): W(v) = frame(v) + max W(u) over the uncharged
	// calls u -> v, in a topological order of them (Kahn's).
	uncharged := func(s *site) (uint32, bool) {
		if s.charged {
			return 0, false
		}
		return call(s)
	}
	first, succ = graph(uncharged, true)
	in := make([]uint32, n+1)
	for _, w := range succ {
		in[w]++
	}
	weight := make([]uint64, n+1) // the longest uncharged chain into each node, frames included
	queue := make([]uint32, 0, n+1)
	for v := range n + 1 {
		if in[v] == 0 {
			queue = append(queue, uint32(v))
		}
	}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if v < tables {
			b := &bodies[v]
			weight[v] = min(weight[v]+StackFrame(uint64(b.params)+b.locals+2), maxFrame)
			b.frame = int32(weight[v])
		}
		for _, w := range succ[first[v]:first[v+1]] {
			weight[w] = max(weight[w], weight[v])
			if in[w]--; in[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
}

// backEdges returns, for each edge of the graph whose edges from v are
// succ[first[v]:first[v+1]], whether it is a back edge of a depth-first
// search from root, then from every node not yet visited (iterative: a
// body can call itself through a million functions). Without its back
// edges the graph is acyclic.
func backEdges(first, succ []uint32, root uint32) []bool {
	n := uint32(len(first) - 1)
	back := make([]bool, len(succ))
	visited := make([]bool, n)
	onPath := make([]bool, n)
	type frame struct{ v, next uint32 }
	var path []frame
	for r := range n + 1 {
		v := root
		if r > 0 {
			v = r - 1
		}
		if visited[v] {
			continue
		}
		visited[v], onPath[v] = true, true
		path = append(path, frame{v, first[v]})
		for len(path) > 0 {
			f := &path[len(path)-1]
			if f.next == first[f.v+1] {
				onPath[f.v] = false
				path = path[:len(path)-1]
				continue
			}
			e := f.next
			f.next++
			switch w := succ[e]; {
			case onPath[w]:
				back[e] = true
			case !visited[w]:
				visited[w], onPath[w] = true, true
				path = append(path, frame{w, first[w]})
			}
		}
	}
	return back
}

// stackCode returns the code charged calls get before and after the
// call, for a frame of the given charge, with the stack budget in global
// stack.
func stackCode(stack uint32, frame int32) (pre, post []byte) {
	pre = appendU32([]byte{0x23}, stack)              // global.get $stack
	pre = appendS32(append(pre, 0x41), frame)         // i32.const <frame>
	pre = appendU32(append(pre, 0x6b, 0x24), stack)   // i32.sub, global.set $stack
	post = appendU32([]byte{0x23}, stack)             // global.get $stack
	post = appendS32(append(post, 0x41), frame)       // i32.const <frame>
	post = appendU32(append(post, 0x6a, 0x24), stack) // i32.add, global.set $stack
	return pre, post
}
