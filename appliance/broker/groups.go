package broker

// SetGroups changes the group masks of every open session of identity (a
// client certificate's common name) at once (access.md "Groups": a change
// of a user's groups, or of the groups its client switched on, applies to
// its open connections). What was queued before keeps the groups it was
// sent to; what a session reads from now on is filtered by its new OUT
// groups. Each such session then receives the latest position report of
// every client it can newly see, and every client that can newly see it
// receives its latest position report, as on connect (protocol.md §5). It
// returns how many sessions it changed.
func (b *Broker) SetGroups(identity string, in, out uint64) int {
	if identity == "" {
		return 0
	}
	list := b.list.Load()
	type change struct {
		s             *Session
		oldIn, oldOut uint64
		newIn, newOut uint64
	}
	var changed []change
	list.each(func(s *Session) {
		if s.info.User != identity || s.isClosed() {
			return
		}
		c := change{s: s, newIn: in, newOut: out}
		c.oldIn, c.oldOut = s.in.Swap(in), s.out.Swap(out)
		changed = append(changed, c)
	})
	for _, c := range changed {
		list.each(func(o *Session) {
			if o == c.s || o.info.User == identity {
				return
			}
			oin, oout := o.in.Load(), o.out.Load()
			if oin&c.newOut != 0 && oin&c.oldOut == 0 {
				if env := o.lastSA.Load(); env != nil {
					c.s.Send(env)
				}
			}
			if c.newIn&oout != 0 && c.oldIn&oout == 0 {
				if env := c.s.lastSA.Load(); env != nil {
					o.Send(env)
				}
			}
		})
	}
	return len(changed)
}

// ReplayVisible queues to every open session of identity the latest
// position report of every client it can see now (the official server's
// answer to a client that asks for the latest reachable SAs after changing
// its channels). It returns how many reports it queued.
func (b *Broker) ReplayVisible(identity string) int {
	if identity == "" {
		return 0
	}
	list := b.list.Load()
	n := 0
	list.each(func(s *Session) {
		if s.info.User != identity || s.isClosed() {
			return
		}
		out := s.out.Load()
		list.each(func(o *Session) {
			if o == s || o.in.Load()&out == 0 {
				return
			}
			if env := o.lastSA.Load(); env != nil && s.Send(env) {
				n++
			}
		})
	})
	return n
}

// SetIn changes the IN mask of this session alone: what it publishes from
// now on goes to in. Unlike SetGroups it replays nothing. A federation
// link's session uses it before each event, published to the local groups
// the event's federate groups map to (docs/federation.md "Groups").
func (s *Session) SetIn(in uint64) { s.in.Store(in) }

// SetOut changes the OUT mask of this session alone (what it reads from
// now on), replaying nothing: a federation link's sessions follow their
// federate's outbound group mapping.
func (s *Session) SetOut(out uint64) { s.out.Store(out) }
