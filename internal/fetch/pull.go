package fetch

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// pull is one Fetch, FetchPinned, Resolve or Signatures: the bytes it
// may still read from the network (Options.MaxPull, over every manifest
// and blob it downloads) and the cache blobs it used and created, so that
// a failed pull removes what it brought. A nil *pull counts nothing.
type pull struct {
	f      *Fetcher
	budget int64
	read   atomic.Int64

	mu   sync.Mutex
	uses map[string]bool // digests this pull read or wrote
	made []string        // digests this pull put into the cache
}

type pullKey struct{}

// pullOf returns the pull ctx belongs to, or nil.
func pullOf(ctx context.Context) *pull {
	p, _ := ctx.Value(pullKey{}).(*pull)
	return p
}

// begin starts a pull (or joins the one ctx already belongs to: end is
// then a no-op).
func (f *Fetcher) begin(ctx context.Context) (context.Context, func(error)) {
	if pullOf(ctx) != nil {
		return ctx, func(error) {}
	}
	p := &pull{f: f, budget: f.opts.MaxPull, uses: map[string]bool{}}
	return context.WithValue(ctx, pullKey{}, p), p.end
}

// use records that the pull relies on the cached blob of digest: a
// failed pull running at the same time does not remove it.
func (p *pull) use(digest string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.uses[digest] {
		return
	}
	p.uses[digest] = true
	p.f.mu.Lock()
	p.f.live[digest]++
	p.f.mu.Unlock()
}

// created records that the pull put the blob of digest into the cache.
func (p *pull) created(digest string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.made = append(p.made, digest)
	p.mu.Unlock()
}

// end finishes the pull. After a failure, the blobs it created are
// removed unless another running pull uses them or a pull that
// succeeded did (its artifact may be one of them).
func (p *pull) end(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.f
	f.mu.Lock()
	defer f.mu.Unlock()
	for d := range p.uses {
		if f.live[d]--; f.live[d] <= 0 {
			delete(f.live, d)
		}
		if err == nil {
			f.kept[d] = true
		}
	}
	if err == nil {
		return
	}
	for _, d := range p.made {
		if f.live[d] == 0 && !f.kept[d] {
			os.Remove(f.blobPath(d))
		}
	}
}

// reserve refuses a download of size bytes that would take the pull
// past its budget.
func (p *pull) reserve(size int64, what string) error {
	if p == nil || size <= 0 {
		return nil
	}
	if n := p.read.Load(); n+size > p.budget {
		return fmt.Errorf("%w: %s of %d bytes would take this pull past its limit of %d bytes (%d read)", ErrTooLarge, what, size, p.budget, n)
	}
	return nil
}

// count returns r counting its bytes against the pull's budget.
func (p *pull) count(r io.ReadCloser) io.ReadCloser {
	if p == nil {
		return r
	}
	return &counted{ReadCloser: r, p: p}
}

type counted struct {
	io.ReadCloser
	p *pull
}

func (c *counted) Read(b []byte) (int, error) {
	n, err := c.ReadCloser.Read(b)
	if total := c.p.read.Add(int64(n)); total > c.p.budget {
		return n, fmt.Errorf("%w: this pull read more than its limit of %d bytes", ErrTooLarge, c.p.budget)
	}
	return n, err
}
