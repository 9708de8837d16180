package canon

import (
	"context"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/component"
)

// DefaultMaxHandles is the number of live handles a ResourceTable holds
// when its Max is zero. The spec allows 2^28-1; a guest creating handles
// in a loop must not get the host to hold that many.
const DefaultMaxHandles = 1 << 16

// ResourceTable is one component instance's table of resource handles,
// as the spec's Table holds them: index 0 is never used, a dropped
// index goes on a free list and is reused by the next handle. Every
// access checks that the index is live and that its resource type is the
// expected one, so a stale, forged or mistyped index is a trap, not a
// confusion of resources.
//
// A ResourceTable is not safe for concurrent use; an instance runs one
// call at a time.
type ResourceTable struct {
	// Max caps the live handles (DefaultMaxHandles if zero).
	Max int
	// OnDrop is called when an own handle is dropped with resource.drop
	// (not when it is moved out by lifting): the runtime calls the
	// resource's destructor there, the guest's core function for a
	// resource the component defines, the host's for one it imports.
	OnDrop func(ctx context.Context, rt *component.ResourceType, rep uint32) error

	entries []handle
	free    []uint32
	live    int
}

type handle struct {
	rt    *component.ResourceType
	rep   uint32
	own   bool
	used  bool
	lends uint32 // borrows of this own handle currently lent out
	scope *Call  // for a borrow handle, the call that lent it
}

// Len returns the number of live handles.
func (t *ResourceTable) Len() int { return t.live }

func (t *ResourceTable) add(h handle) (uint32, error) {
	limit := t.Max
	if limit <= 0 {
		limit = DefaultMaxHandles
	}
	if t.live >= limit {
		return 0, trapf("more than %d live resource handles", limit)
	}
	if len(t.entries) == 0 {
		t.entries = append(t.entries, handle{}) // index 0 is reserved
	}
	h.used = true
	t.live++
	if n := len(t.free); n > 0 {
		i := t.free[n-1]
		t.free = t.free[:n-1]
		t.entries[i] = h
		return i, nil
	}
	t.entries = append(t.entries, h)
	return uint32(len(t.entries) - 1), nil
}

// get returns the live handle i of resource type rt.
func (t *ResourceTable) get(rt *component.ResourceType, i uint32) (*handle, error) {
	if t == nil {
		return nil, trapf("resource handle %d used but the instance has no handle table", i)
	}
	if i == 0 || int64(i) >= int64(len(t.entries)) || !t.entries[i].used {
		return nil, trapf("resource handle %d is not live", i)
	}
	h := &t.entries[i]
	if h.rt != rt {
		return nil, trapf("resource handle %d is a %s, not a %s", i, resName(h.rt), resName(rt))
	}
	return h, nil
}

func (t *ResourceTable) remove(i uint32) {
	t.entries[i] = handle{}
	t.free = append(t.free, i)
	t.live--
}

func resName(rt *component.ResourceType) string {
	if rt == nil || rt.Name == "" {
		return "resource"
	}
	return rt.Name
}

// New is resource.new: it creates an own handle to a resource of type rt
// with representation rep and returns its index.
func (t *ResourceTable) New(rt *component.ResourceType, rep uint32) (uint32, error) {
	return t.add(handle{rt: rt, rep: rep, own: true})
}

// Rep is resource.rep: the representation behind handle i of type rt.
func (t *ResourceTable) Rep(rt *component.ResourceType, i uint32) (uint32, error) {
	h, err := t.get(rt, i)
	if err != nil {
		return 0, err
	}
	return h.rep, nil
}

// Drop is resource.drop: it removes handle i of type rt. Dropping an own
// handle that is lent out is a trap; dropping one that is not calls
// OnDrop. Dropping a borrow handle ends the borrow in the call that lent
// it.
func (t *ResourceTable) Drop(ctx context.Context, rt *component.ResourceType, i uint32) error {
	h, err := t.get(rt, i)
	if err != nil {
		return err
	}
	if h.own && h.lends != 0 {
		return trapf("resource handle %d dropped while %d borrows of it are live", i, h.lends)
	}
	own, rep, scope := h.own, h.rep, h.scope
	t.remove(i)
	if !own {
		if scope != nil {
			scope.borrows--
		}
		return nil
	}
	if t.OnDrop != nil {
		if err := t.OnDrop(ctx, rt, rep); err != nil {
			return fmt.Errorf("destructor of %s %d: %w", resName(rt), rep, err)
		}
	}
	return nil
}

// liftOwn moves own handle i out of the table (its ownership goes to the
// receiver) and returns its representation.
func (t *ResourceTable) liftOwn(rt *component.ResourceType, i uint32) (uint32, error) {
	h, err := t.get(rt, i)
	if err != nil {
		return 0, err
	}
	if !h.own {
		return 0, trapf("resource handle %d is a borrow, passed as own", i)
	}
	if h.lends != 0 {
		return 0, trapf("resource handle %d moved while %d borrows of it are live", i, h.lends)
	}
	rep := h.rep
	t.remove(i)
	return rep, nil
}

// liftBorrow returns the representation behind handle i for the duration
// of call c; an own handle is lent until c ends.
func (t *ResourceTable) liftBorrow(c *Call, rt *component.ResourceType, i uint32) (uint32, error) {
	h, err := t.get(rt, i)
	if err != nil {
		return 0, err
	}
	if h.own {
		h.lends++
		c.lenders = append(c.lenders, i)
	}
	return h.rep, nil
}

// lowerBorrow creates a borrow handle for the duration of call c, which
// the callee must drop before it returns.
func (t *ResourceTable) lowerBorrow(c *Call, rt *component.ResourceType, rep uint32) (uint32, error) {
	i, err := t.add(handle{rt: rt, rep: rep, scope: c})
	if err != nil {
		return 0, err
	}
	c.borrows++
	return i, nil
}
