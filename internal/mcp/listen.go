package mcp

import (
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// listener is one 2026-07-28 subscriptions/listen stream: the filter the
// server honours and a queue of notifications for it.
type listener struct {
	id                        jsonrpc.ID
	tools, prompts, resources bool
	uris                      []string
	taskIDs                   []string       // notifications/tasks for these tasks
	taskPrincipal             string         // ... when they are bound to this principal
	ch                        chan listenMsg // queue drained by the listen loop

	// On stdio, notifications are written straight to the connection once
	// the acknowledgement is out, so that a change made during a request
	// is on the wire before that request's response.
	mu      sync.Mutex
	pending map[string][]byte // keys queued in ch, each with its latest message: a notification of a kind (URI, task) waits once
	direct  *call
	acked   bool
	ended   bool
}

func (l *listener) wantsList(kind string) bool {
	switch kind {
	case "tools":
		return l.tools
	case "prompts":
		return l.prompts
	case "resources":
		return l.resources
	}
	return false
}

func (l *listener) wantsTask(principal, id string) bool {
	if principal != l.taskPrincipal {
		return false
	}
	for _, t := range l.taskIDs {
		if t == id {
			return true
		}
	}
	return false
}

func (l *listener) wantsResource(uri string) bool {
	for _, sub := range l.uris {
		if coversURI(sub, uri) {
			return true
		}
	}
	return false
}

// deliver queues msg without blocking the notifier: a notification whose
// key (kind, URI or task) is already queued replaces the queued message
// (a task's later status is the one to send), and when the stream is too
// slow it is dropped.
func (l *listener) deliver(key string, msg []byte) {
	l.mu.Lock()
	if l.direct != nil && l.acked && !l.ended {
		cl := l.direct
		cl.mu.Lock()
		if ns, ok := cl.out.(noticeSink); ok {
			if !cl.done && !cl.clientCancelled {
				// The key is this stream's: another stream's pending
				// notification does not stand for it.
				ns.notice(key+" "+string(l.id.Raw()), msg)
			}
		} else {
			_ = cl.sendLocked(msg)
		}
		cl.mu.Unlock()
		l.mu.Unlock()
		return
	}
	defer l.mu.Unlock()
	if _, queued := l.pending[key]; queued {
		l.pending[key] = msg
		return
	}
	select {
	case l.ch <- listenMsg{key}:
		l.pending[key] = msg
	default:
	}
}

// listenMsg is a queued notification of a listen stream; its message is
// the listener's pending entry for the key.
type listenMsg struct {
	key string
}

// take marks m no longer queued and returns its latest message.
func (l *listener) take(m listenMsg) []byte {
	l.mu.Lock()
	msg := l.pending[m.key]
	delete(l.pending, m.key)
	l.mu.Unlock()
	return msg
}

// listenStrings reads the member name of a subscriptions/listen filter,
// v: null (none) or an array of at most Options.MaxSubscriptions strings
// (what, for the message), each passing check when not nil.
func (s *Server) listenStrings(v []byte, name, what string, check func(string) *jsonrpc.Error) ([]string, *jsonrpc.Error) {
	it, isArr := jsonscan.NewArrayIter(v)
	if !isArr {
		if jsonscan.Kind(v) == 'z' {
			return nil, nil
		}
		return nil, invalidParams("subscriptions/listen: " + name + " must be an array of " + what)
	}
	var out []string
	for e, more := it.Next(); more; e, more = it.Next() {
		str, ok := jsonscan.String(e)
		if !ok {
			return nil, invalidParams("subscriptions/listen: " + name + " must be an array of " + what)
		}
		if check != nil {
			if e := check(str); e != nil {
				return nil, e
			}
		}
		if len(out) >= s.opts.MaxSubscriptions {
			return nil, invalidParams("subscriptions/listen: more than " + strconv.Itoa(s.opts.MaxSubscriptions) + " " + name)
		}
		out = append(out, str)
	}
	return out, nil
}

// taggedNotification builds a listen-stream notification carrying the
// subscription id (and the uri of resources/updated when uri is set).
func taggedNotification(method, uri string, id jsonrpc.ID) []byte {
	p := make([]byte, 0, 128)
	p = append(p, '{')
	if uri != "" {
		p = append(p, `"uri":`...)
		p = jsonscan.AppendString(p, uri)
		p = append(p, ',')
	}
	p = append(p, `"_meta":{"`+metaSubscriptionID+`":`...)
	p = id.AppendJSON(p)
	p = append(p, "}}"...)
	return jsonrpc.AppendNotification(nil, method, p)
}

// listen serves subscriptions/listen: acknowledge the honoured filter,
// then forward notifications until the client cancels (no response) or the
// server closes (a completion result).
func (s *Server) listen(cl *call) ([]byte, error) {
	f := s.p.Features()
	canLists := f.ListChanged && (f.Tools || f.Prompts || f.Resources)
	canSubs := f.Resources && f.Subscribe
	if !canLists && !canSubs {
		return nil, methodNotFound(methodListen)
	}
	filter, ok := jsonscan.Member(cl.req.Params, "notifications")
	if ok && jsonscan.Kind(filter) != 'o' && jsonscan.Kind(filter) != 'z' {
		return nil, invalidParams("subscriptions/listen: notifications must be an object")
	}
	l := &listener{id: cl.id, ch: make(chan listenMsg, 64), pending: map[string][]byte{}}
	want := func(name string) bool {
		v, ok := jsonscan.Member(filter, name)
		return ok && string(v) == "true"
	}
	l.tools = f.ListChanged && f.Tools && want("toolsListChanged")
	l.prompts = f.ListChanged && f.Prompts && want("promptsListChanged")
	l.resources = f.ListChanged && f.Resources && want("resourcesListChanged")
	var e *jsonrpc.Error
	if v, ok := jsonscan.Member(filter, "resourceSubscriptions"); ok && canSubs {
		checkURI := func(uri string) *jsonrpc.Error { return s.checkURI("subscriptions/listen", uri) }
		if l.uris, e = s.listenStrings(v, "resourceSubscriptions", "URIs", checkURI); e != nil {
			return nil, e
		}
	}

	if v, ok := jsonscan.Member(filter, "taskIds"); ok && jsonscan.Kind(v) != 'z' {
		if l.taskIDs, e = s.listenStrings(v, "taskIds", "task ids", nil); e != nil {
			return nil, e
		}
		if len(l.taskIDs) > 0 && !hasTasksExtension(cl.req.ClientCapabilities) {
			return nil, errNeedTasksExtension
		}
		l.taskPrincipal = taskPrincipal(cl)
	}
	var cost int64
	for _, list := range [][]string{l.uris, l.taskIDs} {
		for _, v := range list {
			cost += subCost(v)
		}
	}
	if !s.chargeSubs(cost) {
		return nil, s.subBudgetError()
	}
	defer s.releaseSubs(cost)

	p := make([]byte, 0, 256)
	p = append(p, `{"_meta":{"`+metaSubscriptionID+`":`...)
	p = cl.id.AppendJSON(p)
	p = append(p, `},"notifications":{`...)
	n := len(p)
	for _, kv := range []struct {
		on   bool
		name string
	}{{l.tools, "toolsListChanged"}, {l.prompts, "promptsListChanged"}, {l.resources, "resourcesListChanged"}} {
		if kv.on {
			if len(p) > n {
				p = append(p, ',')
			}
			p = append(p, `"`+kv.name+`":true`...)
		}
	}
	for _, list := range []struct {
		name string
		vals []string
	}{{"resourceSubscriptions", l.uris}, {"taskIds", l.taskIDs}} {
		if list.vals == nil {
			continue
		}
		if len(p) > n {
			p = append(p, ',')
		}
		p = append(p, `"`+list.name+`":[`...)
		for i, v := range list.vals {
			if i > 0 {
				p = append(p, ',')
			}
			p = jsonscan.AppendString(p, v)
		}
		p = append(p, ']')
	}
	p = append(p, "}}"...)

	if _, ok := cl.out.(lineSink); ok {
		l.direct = cl
	}
	// Register before acknowledging, so that no change after the client
	// saw the acknowledgement is missed; queued notifications only go out
	// after the acknowledgement.
	s.mu.Lock()
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
	}()
	l.mu.Lock()
	cl.mu.Lock()
	err := cl.sendLocked(jsonrpc.AppendNotification(nil, notifAcked, p))
	for drained := false; err == nil && l.direct != nil && !drained; {
		select {
		case m := <-l.ch:
			msg := l.pending[m.key] // l.mu is held
			delete(l.pending, m.key)
			err = cl.sendLocked(msg)
		default:
			drained = true
		}
	}
	cl.mu.Unlock()
	l.acked = true
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if cl.slots != nil {
		cl.slots.release()
		defer cl.slots.acquire()
	}

	ka, canKA := cl.out.(keepAliver)
	var every time.Duration
	if canKA {
		every = cl.keepAlive
	}
	tick, stop := clock(every, true)
	defer stop()
	for {
		select {
		case m := <-l.ch:
			msg := l.take(m)
			cl.mu.Lock()
			err := cl.sendLocked(msg)
			cl.mu.Unlock()
			if err != nil {
				return nil, err
			}
		case <-tick:
			if err := ka.keepAlive(); err != nil {
				return nil, err
			}
		case <-s.ctx.Done():
			return listenComplete(cl), nil
		case <-s.drain:
			return listenComplete(cl), nil
		case <-cl.drain:
			return listenComplete(cl), nil
		case <-cl.stop:
			return listenComplete(cl), nil
		case <-cl.ctx.Done():
			if s.ctx.Err() != nil {
				return listenComplete(cl), nil
			}
			return nil, cl.ctx.Err()
		}
	}
}

// listenComplete is the result that ends a listen stream from the server
// side.
func listenComplete(cl *call) []byte {
	res := append([]byte(`{"resultType":"complete","_meta":{"`+metaSubscriptionID+`":`), cl.id.Raw()...)
	return append(res, "}}"...)
}

// notifyTaskListeners sends notifications/tasks (the DetailedTask) to the
// listen streams that asked for the task of c.
func (s *Server) notifyTaskListeners(c tasks.Change) {
	s.mu.Lock()
	var ls []*listener
	for l := range s.listeners {
		if l.wantsTask(c.Principal, c.ID) {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	if len(ls) == 0 {
		return
	}
	detail, status, ok := s.tasks.detailed(c.Principal, c.ID)
	if !ok {
		return
	}
	// The key holds the status: a queued notification of the same status
	// may stand for this one, but a new status (completed after working)
	// is never coalesced away by a sink that keeps the first of a key.
	key := notifTasks + " " + c.ID + " " + string(status)
	for _, l := range ls {
		p := append(detail[:len(detail):len(detail)], `,"_meta":{"`+metaSubscriptionID+`":`...)
		p = l.id.AppendJSON(p)
		p = append(p, "}}"...)
		l.deliver(key, jsonrpc.AppendNotification(nil, notifTasks, p))
	}
}
