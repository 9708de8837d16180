package mcp

import (
	"log/slog"
	"math"
	"runtime"
	"time"

	"github.com/wasmcp/wasmcp/internal/tasks"
)

// Options configures a Server. The zero value of every field selects the
// documented default; a nil *Options means all defaults.
type Options struct {
	// Name and Version identify the server in serverInfo. Defaults:
	// "wasmcp" and "dev".
	Name    string
	Version string
	// Title is the optional human-readable serverInfo.title.
	Title string
	// Instructions is the optional hint for the model, returned by
	// initialize and server/discover.
	Instructions string

	// Logger receives the engine's diagnostics (never stdout). Nil
	// discards them.
	Logger *slog.Logger

	// PageSize is the number of items per page of the four list methods.
	// Default 100.
	PageSize int

	// ListTTL is the ttlMs of 2026-07-28 list and discover results and
	// ReadTTL that of resources/read results. Zero selects the defaults (5
	// minutes and 1 minute); a negative value sends 0 (always revalidate).
	ListTTL time.Duration
	ReadTTL time.Duration

	// MaxConcurrency bounds the requests one stdio connection runs at
	// once; further requests wait (the reader stops reading). A request
	// waiting for the client (ClientCall, subscriptions/listen) does not
	// count. Default 64.
	MaxConcurrency int

	// MaxMessageBytes is the longest stdio line accepted; longer lines are
	// discarded and answered with an error. Default 4 MiB.
	MaxMessageBytes int

	// DrainTimeout is how long ServeStdio lets the requests in flight run
	// after the end of its input before cancelling them. Default 10
	// seconds; negative waits without limit.
	DrainTimeout time.Duration

	// MaxConcurrentCalls bounds the provider calls (tools/call,
	// resources/read, prompts/get, completion/complete) running at once
	// across every transport, and MaxWaitingCalls the calls waiting for
	// one of those slots (at most CallWaitTimeout). Further calls are
	// refused with -32001 (data {"busy":true}); on HTTP, a request refused
	// before dispatch gets 503 with Retry-After. A call waiting for the
	// client (ClientCall), or for a free instance of its plugin
	// (Request.YieldSlot), gives its slot back meanwhile and keeps its
	// place among the admitted calls. Load is shed by time: a waiting call
	// fails after CallWaitTimeout; MaxWaitingCalls only bounds the memory
	// waiting calls hold, and its default lets a quick plugin absorb as
	// many clients as the HTTP listener accepts (max_conns, 1024) without
	// refusals. Defaults: max(16, 4 × GOMAXPROCS),
	// max(1024, 4 × MaxConcurrentCalls) and 10 seconds; a negative
	// MaxWaitingCalls allows no waiting.
	MaxConcurrentCalls int
	MaxWaitingCalls    int
	CallWaitTimeout    time.Duration
	// MaxCallsPerShare bounds the run slots that the calls of one share
	// key (SlotSharer: one plugin) hold at once; a call of a full share
	// waits (as for any slot) while calls of other keys run. Default
	// max(1, MaxConcurrentCalls/2).
	MaxCallsPerShare int
	// PrincipalConcurrent bounds the admitted calls (running and
	// waiting) of one principal: the authenticated caller, else the
	// legacy session, else the client's address or stdio connection.
	// PrincipalRate bounds the calls one principal starts a second
	// (0: no rate limit), with bursts of PrincipalBurst. Beyond them a
	// call is refused with -32001 (data {"busy":true}), on HTTP with 429
	// and Retry-After. Defaults: MaxConcurrentCalls + MaxWaitingCalls
	// less an eighth (the last eighth of the places stay for other
	// principals), no rate limit, and max(1, PrincipalRate).
	PrincipalConcurrent int
	PrincipalRate       float64
	PrincipalBurst      int

	// MaxBatch bounds the messages of one 2025-03-26 JSON-RPC batch (stdio
	// and HTTP): a longer batch is refused as a whole with one -32600
	// error, and the session goes on. MaxBatchBytes bounds the total size
	// of a batch's responses: once they reach it, the responses of the
	// remaining requests are replaced by -32600 errors (and the requests
	// not yet started do not run). A batch runs at most 8 of its
	// requests at once. Defaults: 100 and 16 MiB.
	MaxBatch      int
	MaxBatchBytes int

	// MaxSubscriptions bounds the resource subscriptions of one legacy
	// session (resources/subscribe) and of one subscriptions/listen
	// stream, and MaxURIBytes the length of a subscribed URI (and of the
	// URI of resources/read and of a completion's ref); beyond
	// them the request fails with -32602. A resources/updated
	// notification for a longer URI is dropped (and logged). Defaults 100
	// and 8 KiB.
	MaxSubscriptions int
	MaxURIBytes      int
	// MaxSubscriptionBytes bounds the subscriptions the server keeps
	// in all, in bytes: the URIs of every legacy session's
	// resources/subscribe and the URIs and task ids of every running
	// subscriptions/listen stream, each counted with 64 bytes more.
	// Past it a subscribe or listen fails with -32001 (data
	// {"busy":true}). Default 64 MiB.
	MaxSubscriptionBytes int64
	// NotifyQueueBytes bounds the notifications (list_changed,
	// resources/updated) a stdio connection queues behind a client that
	// does not read its output: past it they are dropped, with a log
	// line, instead of blocking the notifier. A list_changed of a kind,
	// or a resources/updated of a URI, already waiting to be written is
	// not queued again. (HTTP sessions queue them in their SSE stream,
	// bounded by HTTPOptions.ReplayBytes, and coalesce them the same
	// way.) Default 1 MiB.
	NotifyQueueBytes int

	// ToolRate, when set, gives the rate limit of the tool a tools/call
	// names, applied to each principal on its own: the key its buckets
	// are kept under (one for every name the tool is exposed by), its
	// calls a second and its burst; a rate of 0 is no limit. A call past
	// it is refused as one past PrincipalRate is (-32001 with data
	// {"busy":true,...}, HTTP 429 with Retry-After), before it runs.
	ToolRate func(tool string) (key string, rate float64, burst int)
	// Rates keeps ToolRate's buckets where every replica finds them.
	// Default none: in this process (bounded as the principals' are).
	Rates RateStore

	// Observer, when set, is told of every request the engine runs
	// (telemetry). Default none.
	Observer Observer

	// Bus, when set, carries NotifyListChanged and NotifyResourceUpdated
	// to the other replicas of a cluster, and theirs to this server's
	// sessions and listen streams. Default none: notifications stay in
	// the process.
	Bus Bus
	// Sessions, with Bus, keeps legacy HTTP sessions where every server
	// of a cluster finds them (see http_shared.go); SessionKey seals their
	// ids. Default none: a session lives on the server that opened it.
	Sessions   SessionStore
	SessionKey []byte

	// TaskStore keeps the tasks (tasks.go) and TaskNotifier carries their
	// changes; a shared pair lets several processes serve the same tasks.
	// Defaults: tasks.NewMemory with the caps MaxTasks (live tasks in
	// all) and MaxTasksPerPrincipal, and tasks.NewLocal. The caps apply
	// only to the default store (a given store has its own).
	TaskStore    tasks.Store
	TaskNotifier tasks.Notifier
	// MaxTasks and MaxTasksPerPrincipal bound the live (working or
	// input_required) tasks of the default store; beyond them creating a
	// task fails with -32001 (data {"busy":true}). Defaults 1000 and 100.
	MaxTasks             int
	MaxTasksPerPrincipal int
	// MaxTaskBytes and MaxTaskBytesPerPrincipal bound the bytes the
	// default store keeps for tasks, live or ended (tasks.Limits): a task
	// whose arguments do not fit is refused like one past MaxTasks, and a
	// result that does not fit makes the task failed with an error naming
	// the budget. Defaults 128 MiB and 32 MiB.
	MaxTaskBytes             int64
	MaxTaskBytesPerPrincipal int64
	// TaskLease is how long a task's record vouches for the process
	// running it (tasks.Task.LeaseUntil), renewed every third of it while
	// the call runs: in a shared store, a task whose process died is seen
	// failed by the others once its lease passes. Default 30 seconds.
	TaskLease time.Duration
	// TaskTimeout is the deadline of a task's provider call (the
	// provider applies it instead of its per-call timeout: Request.TaskID
	// is set). Default 10 minutes.
	TaskTimeout time.Duration
	// TaskTTL is how long a task is kept from its creation, whatever its
	// status, and the longest ttl a 2025-11-25 client may ask for.
	// Default 1 hour.
	TaskTTL time.Duration
	// TaskPollInterval is the pollInterval tasks suggest. Default 1 second.
	TaskPollInterval time.Duration
	// TaskStartWait is how long a 2026-07-28 task-augmented tools/call
	// waits for the first round (or Request.StartTask) before answering
	// with the task. Default 500 ms.
	TaskStartWait time.Duration
}

// SessionStore keeps the state of shared legacy sessions, each under its
// id with an idle expiry. Its methods must return within a bounded time.
type SessionStore interface {
	// Save stores state under id, expiring after ttl.
	Save(id string, state []byte, ttl time.Duration) error
	// Load returns the state of id and extends its expiry to ttl, or
	// found false when there is none. It reads at most max+1 bytes of
	// the state: a longer state is returned cut to max+1 bytes, which
	// the engine refuses by its length, so that a record some other
	// writer of the store made huge is never read whole.
	Load(id string, ttl time.Duration, max int) (state []byte, found bool, err error)
	// Delete removes id.
	Delete(id string) error
}

// Bus carries notifications between the servers (replicas) that serve
// one deployment. The engine always notifies its own clients directly;
// the Bus is only for the others.
type Bus interface {
	// Publish sends msg to every other server. It must return within a
	// bounded time; an error is logged and the notification is lost to
	// the others.
	Publish(msg []byte) error
	// Subscribe calls fn with every message another server published,
	// until the returned function is called. fn must not block.
	Subscribe(fn func(msg []byte)) (unsubscribe func())
}

// TaskLimits returns the caps and byte budgets that o's MaxTasks,
// MaxTasksPerPrincipal, MaxTaskBytes and MaxTaskBytesPerPrincipal (zero:
// their defaults) give the default store, for a TaskStore made elsewhere
// (a shared one) to apply the same.
func TaskLimits(o Options) tasks.Limits {
	v := o.withDefaults()
	return v.taskLimits()
}

func (o *Options) taskLimits() tasks.Limits {
	return tasks.Limits{MaxLive: o.MaxTasks, MaxLivePerPrincipal: o.MaxTasksPerPrincipal,
		MaxBytes: o.MaxTaskBytes, MaxBytesPerPrincipal: o.MaxTaskBytesPerPrincipal}
}

func (o *Options) withDefaults() Options {
	v := deref(o)
	if v.Name == "" {
		v.Name = "wasmcp"
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Logger == nil {
		v.Logger = slog.New(slog.DiscardHandler)
	}
	v.PageSize = positiveOr(v.PageSize, 100)
	v.ListTTL = ttlDefault(v.ListTTL, 5*time.Minute)
	v.ReadTTL = ttlDefault(v.ReadTTL, time.Minute)
	v.MaxConcurrency = positiveOr(v.MaxConcurrency, 64)
	v.MaxMessageBytes = positiveOr(v.MaxMessageBytes, 4<<20)
	if v.DrainTimeout == 0 {
		v.DrainTimeout = 10 * time.Second
	}
	v.MaxConcurrentCalls = positiveOr(v.MaxConcurrentCalls, max(16, 4*runtime.GOMAXPROCS(0)))
	switch {
	case v.MaxWaitingCalls == 0:
		v.MaxWaitingCalls = max(1024, 4*v.MaxConcurrentCalls)
	case v.MaxWaitingCalls < 0:
		v.MaxWaitingCalls = 0
	}
	v.CallWaitTimeout = positiveOr(v.CallWaitTimeout, 10*time.Second)
	switch {
	case v.MaxCallsPerShare <= 0:
		v.MaxCallsPerShare = max(1, v.MaxConcurrentCalls/2)
	case v.MaxCallsPerShare > v.MaxConcurrentCalls:
		v.MaxCallsPerShare = v.MaxConcurrentCalls
	}
	switch capacity := v.MaxConcurrentCalls + v.MaxWaitingCalls; {
	case v.PrincipalConcurrent <= 0:
		v.PrincipalConcurrent = capacity - capacity/8
	case v.PrincipalConcurrent > capacity:
		v.PrincipalConcurrent = capacity // no share beyond the server's
	}
	if v.PrincipalRate < 0 {
		v.PrincipalRate = 0
	}
	v.PrincipalBurst = positiveOr(v.PrincipalBurst, max(1, int(math.Ceil(v.PrincipalRate))))
	v.MaxBatch = positiveOr(v.MaxBatch, 100)
	v.MaxBatchBytes = positiveOr(v.MaxBatchBytes, 16<<20)
	v.MaxSubscriptions = positiveOr(v.MaxSubscriptions, 100)
	v.MaxURIBytes = positiveOr(v.MaxURIBytes, 8<<10)
	v.MaxSubscriptionBytes = positiveOr(v.MaxSubscriptionBytes, 64<<20)
	v.NotifyQueueBytes = positiveOr(v.NotifyQueueBytes, 1<<20)
	v.MaxTasks = positiveOr(v.MaxTasks, 1000)
	v.MaxTasksPerPrincipal = positiveOr(v.MaxTasksPerPrincipal, 100)
	v.MaxTaskBytes = positiveOr(v.MaxTaskBytes, 128<<20)
	v.MaxTaskBytesPerPrincipal = positiveOr(v.MaxTaskBytesPerPrincipal, 32<<20)
	v.TaskLease = positiveOr(v.TaskLease, 30*time.Second)
	if v.TaskStore == nil {
		v.TaskStore = tasks.NewMemory(v.taskLimits())
	}
	if v.TaskNotifier == nil {
		v.TaskNotifier = tasks.NewLocal()
	}
	v.TaskTimeout = positiveOr(v.TaskTimeout, 10*time.Minute)
	v.TaskTTL = positiveOr(v.TaskTTL, time.Hour)
	v.TaskPollInterval = positiveOr(v.TaskPollInterval, time.Second)
	v.TaskStartWait = positiveOr(v.TaskStartWait, 500*time.Millisecond)
	return v
}

// positiveOr returns v, or def when v is zero or negative: the rule of
// every count, size and timeout of Options whose zero means the default.
func positiveOr[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func ttlDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}
