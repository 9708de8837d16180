package runtime

import "time"

// armSweep makes sure the pool's sweep timer fires within d. p.mu is
// held. The timer is created on first use and re-armed by sweepIdle while
// instances stay idle, so a pool costs no goroutine and an idle pool
// without instances no timer.
func (p *Pool) armSweep(d time.Duration) {
	if p.swept {
		return
	}
	p.swept = true
	if p.sweep == nil {
		p.sweep = time.AfterFunc(d, p.sweepIdle)
		return
	}
	p.sweep.Reset(d)
}

// sweepIdle closes the instances idle for IdleTimeout or longer and
// re-arms the timer for the next one to expire. The idle list is in
// pooling order, so the expired instances are a prefix of it.
func (p *Pool) sweepIdle() {
	p.mu.Lock()
	p.swept = false
	if p.closed {
		p.mu.Unlock()
		return
	}
	now := time.Now()
	n := 0
	for n < len(p.idle) && now.Sub(p.idle[n].idle) >= p.lim.IdleTimeout {
		n++
	}
	expired := make([]*instance, n)
	copy(expired, p.idle[:n])
	rest := copy(p.idle, p.idle[n:])
	clear(p.idle[rest:])
	p.idle = p.idle[:rest]
	if len(p.idle) > 0 {
		p.armSweep(p.lim.IdleTimeout - now.Sub(p.idle[0].idle))
	}
	p.mu.Unlock()
	for _, inst := range expired {
		p.expired.Add(1)
		p.closeInstance(inst)
	}
}
