package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Status is the state of a task, as both protocol designs name it.
type Status string

// The statuses of a task. Working and InputRequired are live; the other
// three are terminal and never change again.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	return s == Working || s == InputRequired || s.Terminal()
}

// Task is the record of one task. It is plain data: a Store keeps a copy
// and hands out copies, and it encodes to JSON and back unchanged.
type Task struct {
	// ID is the task id, assigned by Store.Create (NewID).
	ID string `json:"id"`
	// Principal is who the task is bound to: only requests of the same
	// principal see it. The engine chooses the names.
	Principal string `json:"principal"`
	// Status is the current status; StatusMessage optionally explains it.
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and UpdatedAt are set by the Store (UTC, millisecond
	// precision); UpdatedAt changes with every Update.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTL is how long the task is kept after CreatedAt; ExpiresAt is
	// CreatedAt+TTL (set by Create). Once ExpiresAt passes the task is
	// gone, whatever its status.
	TTL       time.Duration `json:"ttl"`
	ExpiresAt time.Time     `json:"expiresAt"`
	// PollInterval is the interval the server suggests between polls.
	PollInterval time.Duration `json:"pollInterval,omitempty"`

	// Method and Params are the request the task runs (e.g. tools/call
	// and its params), kept so that any process can resume it.
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Era tells the protocol design the task was created under
	// ("2025-11-25" or "2026-07-28"); the engine reads it back.
	Era string `json:"era,omitempty"`

	// Result is the result object of a completed task; Error the JSON-RPC
	// error object of a failed one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// InputRequests are the requests still waiting for an answer while
	// the task is input_required (a JSON object keyed by request key);
	// InputResponses are answers the client sent that the task has not
	// consumed yet (also an object keyed by request key). State is opaque
	// data the runner keeps between rounds.
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
}

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.Params = cloneRaw(t.Params)
	c.Result = cloneRaw(t.Result)
	c.Error = cloneRaw(t.Error)
	c.InputRequests = cloneRaw(t.InputRequests)
	c.InputResponses = cloneRaw(t.InputResponses)
	c.State = cloneRaw(t.State)
	return &c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// Errors a Store returns; callers branch on them with errors.Is.
var (
	// ErrNotFound: no such task for this principal (never created,
	// expired, or bound to another principal).
	ErrNotFound = errors.New("tasks: no such task")
	// ErrTooMany: creating the task would exceed a cap (Limits). The
	// error wraps one of ErrTooManyTotal and ErrTooManyForPrincipal.
	ErrTooMany = errors.New("tasks: too many live tasks")
	// ErrTerminal: the update would change a terminal status.
	ErrTerminal = errors.New("tasks: the task already ended")
	// ErrBadCursor: List got a cursor it did not hand out.
	ErrBadCursor = errors.New("tasks: invalid cursor")
)

// ErrTooManyTotal and ErrTooManyForPrincipal tell which cap refused a
// Create; both match ErrTooMany too.
var (
	ErrTooManyTotal        = &capError{"tasks: too many live tasks on this server"}
	ErrTooManyForPrincipal = &capError{"tasks: too many live tasks for this caller"}
)

type capError struct{ msg string }

func (e *capError) Error() string        { return e.msg }
func (e *capError) Is(target error) bool { return target == ErrTooMany }

// Limits are the caps a Store enforces on live tasks (working or
// input_required); terminal tasks count against no cap and are dropped
// at their ExpiresAt. Zero means no cap.
type Limits struct {
	MaxLive             int // in the whole store
	MaxLivePerPrincipal int // per principal
}

// Store keeps task records. Implementations are safe for concurrent use;
// every method takes a context first (a shared store does I/O) and
// returns copies the caller may keep.
type Store interface {
	// Create stores t as a new task: it assigns t.ID (NewID), sets
	// CreatedAt, UpdatedAt and ExpiresAt (from t.TTL, which must be
	// positive) and returns the stored copy. t.Status must be live
	// (working or input_required). It fails with an error matching
	// ErrTooMany when a cap would be exceeded.
	Create(ctx context.Context, t *Task) (*Task, error)
	// Get returns the task id of principal, or ErrNotFound.
	Get(ctx context.Context, principal, id string) (*Task, error)
	// Update applies fn to a copy of the task and stores the result
	// atomically (fn may be called again if the task changed meanwhile;
	// it must not have side effects). ID, Principal, CreatedAt, TTL and
	// ExpiresAt cannot change; UpdatedAt is set. An error from fn is
	// returned as is and nothing is stored. Changing the status of a
	// terminal task fails with ErrTerminal.
	Update(ctx context.Context, principal, id string, fn func(*Task) error) (*Task, error)
	// Cancel moves a live task to cancelled and returns it; a task that
	// already ended is returned unchanged (no error).
	Cancel(ctx context.Context, principal, id string) (*Task, error)
	// List returns up to limit tasks of principal, oldest first, starting
	// after the opaque cursor ("" for the first page), and the cursor of
	// the next page ("" after the last).
	List(ctx context.Context, principal, cursor string, limit int) ([]*Task, string, error)
	// Delete removes the task id of principal at once (a task the
	// engine created but never announced); ErrNotFound if there is none.
	Delete(ctx context.Context, principal, id string) error
	// Expire drops the tasks whose ExpiresAt is not after now and returns
	// how many it dropped. (Get never returns an expired task either.)
	Expire(ctx context.Context, now time.Time) (int, error)
}

// Change is a status change a Notifier carries.
type Change struct {
	ID        string    `json:"id"`
	Principal string    `json:"principal"`
	Status    Status    `json:"status"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Notifier tells every process sharing a Store that a task changed, so
// that the one running it learns of a cancel or of input responses, and
// the ones serving notification streams can forward the status. NewLocal
// serves one process; a shared store pairs with a pub/sub.
type Notifier interface {
	// Publish announces c to every subscriber (including those of this
	// process). It must not block for long.
	Publish(ctx context.Context, c Change) error
	// Subscribe calls fn for every published change until the returned
	// function is called. fn runs on the notifier's goroutine and must not
	// block.
	Subscribe(fn func(Change)) (unsubscribe func())
}

// NewID returns a new task id: 128 bits from crypto/rand, base64url
// without padding (22 characters).
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("tasks: crypto/rand failed: " + err.Error()) // never happens (Go 1.24+ rand.Read does not fail)
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Now is the time a Store records: UTC, truncated to milliseconds (the
// protocols carry milliseconds).
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
