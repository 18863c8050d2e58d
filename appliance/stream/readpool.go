package stream

import (
	"sync"
	"time"
)

// readPool runs the reading and decoding of connections that have input
// (conn.readReady, parked.go) on goroutines that stay a moment after their
// job for the next one. A new goroutine starts with a small stack and grows it to decode
// an event, which costs a copy each time; a goroutine kept between jobs has
// grown already. Jobs never queue: one goes to a goroutine waiting for work
// if there is one, otherwise to a new goroutine, so a job that takes long (a
// client being paced) never holds up another connection. Goroutines with no
// job for poolLinger end, so a quiet server keeps none; close ends the
// waiting ones at once and waits for every one (the listener's Shutdown).
type readPool struct {
	jobs chan *conn // unbuffered: a send succeeds only into a waiting goroutine
	stop chan struct{}
	wg   sync.WaitGroup
}

// poolLinger is how long a goroutine of the pool waits for its next job.
const poolLinger = time.Second

func newReadPool() *readPool { return &readPool{jobs: make(chan *conn), stop: make(chan struct{})} }

// run starts c.readReady on a waiting goroutine or a new one.
func (p *readPool) run(c *conn) {
	select {
	case p.jobs <- c:
	default:
		p.wg.Add(1)
		go p.work(c)
	}
}

// close ends the goroutines waiting for a job and waits for every one;
// called once no connection is left to read.
func (p *readPool) close() {
	close(p.stop)
	p.wg.Wait()
}

func (p *readPool) work(c *conn) {
	defer p.wg.Done()
	t := time.NewTimer(poolLinger)
	defer t.Stop()
	for {
		c.readReady()
		t.Reset(poolLinger)
		select {
		case c = <-p.jobs:
		case <-t.C:
			return
		case <-p.stop:
			return
		}
	}
}
