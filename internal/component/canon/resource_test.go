package canon

import (
	"context"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

func TestResourceTable(t *testing.T) {
	ctx := context.Background()
	rt := &component.ResourceType{Name: "file", Dtor: 3}
	other := &component.ResourceType{Name: "dir", Dtor: -1}
	var dropped []uint32
	tb := &ResourceTable{OnDrop: func(_ context.Context, r *component.ResourceType, rep uint32) error {
		if r != rt {
			t.Errorf("destructor called for %s", resName(r))
		}
		dropped = append(dropped, rep)
		return nil
	}}
	a, err := tb.New(rt, 100)
	if err != nil || a != 1 {
		t.Fatalf("first handle %d, %v (index 0 is reserved)", a, err)
	}
	b, _ := tb.New(rt, 200)
	if rep, err := tb.Rep(rt, b); err != nil || rep != 200 {
		t.Fatalf("rep %d %v", rep, err)
	}
	if _, err := tb.Rep(other, b); !errors.Is(err, ErrTrap) {
		t.Fatalf("rep of the wrong type: %v", err)
	}
	if err := tb.Drop(ctx, rt, a); err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0] != 100 {
		t.Fatalf("destructor calls %v", dropped)
	}
	if err := tb.Drop(ctx, rt, a); !errors.Is(err, ErrTrap) {
		t.Fatalf("double drop: %v", err)
	}
	if _, err := tb.Rep(rt, a); !errors.Is(err, ErrTrap) {
		t.Fatalf("rep of a dropped handle: %v", err)
	}
	// The free list gives the dropped index to the next handle.
	c, _ := tb.New(other, 300)
	if c != a {
		t.Fatalf("index %d not reused (got %d)", a, c)
	}
	if _, err := tb.Rep(rt, c); !errors.Is(err, ErrTrap) {
		t.Fatalf("a stale index of the old type reached the new resource: %v", err)
	}
	if tb.Len() != 2 {
		t.Fatalf("Len %d", tb.Len())
	}
	for _, i := range []uint32{0, 99, 0xffffffff} {
		if err := tb.Drop(ctx, rt, i); !errors.Is(err, ErrTrap) {
			t.Errorf("drop %d: %v", i, err)
		}
	}
	// A destructor's error is the drop's.
	tb.OnDrop = func(context.Context, *component.ResourceType, uint32) error { return errors.New("dtor failed") }
	if err := tb.Drop(ctx, rt, b); err == nil {
		t.Fatal("destructor error lost")
	}
}

func TestResourceTableMax(t *testing.T) {
	tb := &ResourceTable{Max: 3}
	for i := range 3 {
		if _, err := tb.New(hostRes, uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.New(hostRes, 9); !errors.Is(err, ErrTrap) {
		t.Fatalf("handle past Max: %v", err)
	}
	if err := tb.Drop(context.Background(), hostRes, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.New(hostRes, 9); err != nil {
		t.Fatalf("handle after a drop: %v", err)
	}
}

// TestBorrowScopeExport checks the borrows a host lends to an export: the
// callee must drop them before it returns (finish_lift's check), and a
// borrow of a resource the callee implements is its representation.
func TestBorrowScopeExport(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	f, _ := NewFunc(fn(tU32, borrow(hostRes), borrow(hostRes)))
	c := f.NewCall(e.opts)
	flat, err := c.LowerArgs(ctx, []any{uint32(10), uint32(20)})
	if err != nil {
		t.Fatal(err)
	}
	if e.table.Len() != 2 {
		t.Fatalf("%d handles after lowering two borrows", e.table.Len())
	}
	if err := e.table.Drop(ctx, hostRes, uint32(flat[0])); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LiftResults(ctx, []uint64{1}); !errors.Is(err, ErrTrap) {
		t.Fatalf("returned with a borrow live: %v", err)
	}
	if err := e.table.Drop(ctx, hostRes, uint32(flat[1])); err != nil {
		t.Fatal(err)
	}
	post := 0
	e.opts.PostReturn = func(_ context.Context, fl []uint64) error {
		post++
		if len(fl) != 1 || fl[0] != 1 {
			t.Errorf("post-return got %v", fl)
		}
		return nil
	}
	if v, err := c.LiftResults(ctx, []uint64{1}); err != nil || v != uint64(1) || post != 1 {
		t.Fatalf("after the drops: %v %v, post-return ran %d times", v, err, post)
	}

	guestRes := &component.ResourceType{Name: "mine", Dtor: -1}
	g, _ := NewFunc(fn(nil, borrow(guestRes)))
	flat, err = g.NewCall(e.opts).LowerArgs(ctx, []any{uint32(0xabc)})
	if err != nil || flat[0] != 0xabc || e.table.Len() != 0 {
		t.Fatalf("borrow of the callee's own resource: %v %v, %d handles", flat, err, e.table.Len())
	}
}

// TestBorrowScopeImport checks the own handles a guest lends to a host
// import: they cannot be dropped or moved during the call, and are given
// back when it ends.
func TestBorrowScopeImport(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	h, _ := e.table.New(hostRes, 55)
	f, _ := NewFunc(fn(tU32, borrow(hostRes)))
	c := f.NewCall(e.opts)
	args, err := c.LiftArgs(ctx, []uint64{uint64(h)})
	if err != nil || args[0] != uint32(55) {
		t.Fatalf("lift borrow: %v %v", args, err)
	}
	if err := e.table.Drop(ctx, hostRes, h); !errors.Is(err, ErrTrap) {
		t.Fatalf("drop while lent: %v", err)
	}
	mv, _ := NewFunc(fn(nil, own(hostRes)))
	if _, err := mv.NewCall(e.opts).LiftArgs(ctx, []uint64{uint64(h)}); !errors.Is(err, ErrTrap) {
		t.Fatalf("move while lent: %v", err)
	}
	if _, err := c.LowerResults(ctx, uint32(1), nil); err != nil {
		t.Fatal(err)
	}
	c.End() // idempotent
	if err := e.table.Drop(ctx, hostRes, h); err != nil {
		t.Fatalf("drop after the call: %v", err)
	}
}

// TestOwnMoves checks that lifting an own handle moves it out of the
// table, so a second use of the index traps.
func TestOwnMoves(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	h, _ := e.table.New(hostRes, 7)
	f, _ := NewFunc(fn(nil, own(hostRes)))
	if args, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{uint64(h)}); err != nil || args[0] != uint32(7) {
		t.Fatalf("lift own: %v %v", args, err)
	}
	if _, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{uint64(h)}); !errors.Is(err, ErrTrap) {
		t.Fatalf("second lift of a moved handle: %v", err)
	}
	// A borrow handle cannot be passed as own.
	b, _ := NewFunc(fn(nil, borrow(hostRes)))
	c := b.NewCall(e.opts)
	flat, _ := c.LowerArgs(ctx, []any{uint32(8)})
	if _, err := f.NewCall(e.opts).LiftArgs(ctx, flat); !errors.Is(err, ErrTrap) {
		t.Fatalf("borrow passed as own: %v", err)
	}
}

// TestFailedLowerKeepsHandles checks that a lowering that fails on a bad
// value takes back the handles it had already put in the table.
func TestFailedLowerKeepsHandles(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	f, _ := NewFunc(fn(nil, own(hostRes), borrow(hostRes), tU8))
	c := f.NewCall(e.opts)
	if _, err := c.LowerArgs(ctx, []any{uint32(1), uint32(2), "not a u8"}); !errors.Is(err, ErrValue) {
		t.Fatalf("bad value: %v", err)
	}
	if n := e.table.Len(); n != 0 || c.borrows != 0 {
		t.Fatalf("%d handles and %d borrows left after a failed lowering", n, c.borrows)
	}
	if _, err := c.LowerArgs(ctx, []any{uint32(1), uint32(2), 3}); err != nil || e.table.Len() != 2 {
		t.Fatalf("lowering again: %v, %d handles", err, e.table.Len())
	}
}
