package stream

import "time"

// readPool runs the reading and decoding of connections that have input
// (conn.readReady, parked.go) on goroutines that stay a moment after their
// job for the next one. A new goroutine starts with a small stack and grows it to decode
// an event, which costs a copy each time; a goroutine kept between jobs has
// grown already. Jobs never queue: one goes to a goroutine waiting for work
// if there is one, otherwise to a new goroutine, so a job that takes long (a
// client being paced) never holds up another connection. Goroutines with no
// job for poolLinger end, so a quiet server keeps none.
type readPool struct {
	jobs chan *conn // unbuffered: a send succeeds only into a waiting goroutine
}

// poolLinger is how long a goroutine of the pool waits for its next job.
const poolLinger = time.Second

func newReadPool() *readPool { return &readPool{jobs: make(chan *conn)} }

// run starts c.readReady on a waiting goroutine or a new one.
func (p *readPool) run(c *conn) {
	select {
	case p.jobs <- c:
	default:
		go p.work(c)
	}
}

func (p *readPool) work(c *conn) {
	t := time.NewTimer(poolLinger)
	defer t.Stop()
	for {
		c.readReady()
		t.Reset(poolLinger)
		select {
		case c = <-p.jobs:
		case <-t.C:
			return
		}
	}
}
