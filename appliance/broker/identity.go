package broker

import "fmt"

// identities is who holds which uid (protocol.md §1: a client is known by
// the uid of its position reports). All fields are guarded by Broker.mu.
//
//   - holders: the open sessions whose identity is the uid. Usually one; two
//     while a client reconnects before its old connection timed out, or when
//     one user runs the same uid on two links.
//   - owner: the newest holder. Directed messages go to it alone.
//   - bound: the certificate identity (client certificate common name) that
//     first claimed the uid, on a CoT stream or through the client API
//     (ClaimUID). Another identity, or a connection without one (8087), can
//     never claim it afterwards. Bindings outlive the connection, so an
//     impostor cannot wait for the victim to leave, and the run: they are
//     loaded at start (Options.Bindings) and reported as they are made
//     (Options.Bound) to be kept (access.md "Uids belong to identities").
//   - perUser: how many uids each identity has bound (bounded).
type identities struct {
	holders map[string][]*Session
	owners  map[string]*Session
	bound   map[string]string
	perUser map[string]int
}

func newIdentities() identities {
	return identities{
		holders: map[string][]*Session{},
		owners:  map[string]*Session{},
		bound:   map[string]string{},
		perUser: map[string]int{},
	}
}

// owner is the session that owns uid (nil: nobody connected holds it).
func (ids *identities) owner(uid string) *Session { return ids.owners[uid] }

// check reports whether user (a certificate identity, "" for none) may
// claim uid, binding it to user when it is the first certificate to do so
// (then bound is true).
func (ids *identities) check(uid, user string, maxPerUser int) (bound bool, err error) {
	if owner, ok := ids.bound[uid]; ok {
		if owner != user {
			return false, fmt.Errorf("%w: bound to a certificate other than this connection's", ErrUIDTaken)
		}
		return false, nil
	}
	if user == "" {
		return false, nil
	}
	if ids.perUser[user] >= maxPerUser {
		return false, fmt.Errorf("%w: this certificate already claimed %d uids", ErrUIDTaken, maxPerUser)
	}
	ids.bound[uid] = user
	ids.perUser[user]++
	return true, nil
}

// ClaimUID is the client API's side of the uid bindings (access.md "Uids
// belong to identities"): it reports whether identity (a certificate's
// common name; "" for an anonymous caller) may act for uid, binding uid to
// identity when it is unbound. ErrUIDTaken when it belongs to another
// identity, or identity has bound as many uids as it may.
func (b *Broker) ClaimUID(uid, identity string) error {
	b.mu.Lock()
	bound, err := b.ids.check(uid, identity, b.opts.MaxUIDsPerUser)
	b.mu.Unlock()
	if bound && b.opts.Bound != nil {
		b.opts.Bound(uid, identity)
	}
	return err
}

// UIDOwner returns the identity uid is bound to.
func (b *Broker) UIDOwner(uid string) (identity string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	identity, ok = b.ids.bound[uid]
	return identity, ok
}

// Unbind frees every uid bound to identity (its user was deleted).
func (b *Broker) Unbind(identity string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid, who := range b.ids.bound {
		if who == identity {
			delete(b.ids.bound, uid)
		}
	}
	delete(b.ids.perUser, identity)
}

// hold makes s the newest holder and the owner of uid, and lets go of its
// previous uid prev (a client that changed its uid).
func (ids *identities) hold(s *Session, uid, prev string) {
	if prev != "" && prev != uid {
		ids.release(s, prev)
	}
	hs := ids.holders[uid]
	for i, h := range hs {
		if h == s {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	ids.holders[uid] = append(hs, s)
	ids.owners[uid] = s
}

// release drops s from the holders of uid and reports whether it was the
// last one (then the client has really left). The owner passes to the
// newest remaining holder.
func (ids *identities) release(s *Session, uid string) (last bool) {
	if uid == "" {
		return false
	}
	hs := ids.holders[uid]
	found := false
	for i, h := range hs {
		if h == s {
			hs = append(hs[:i], hs[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		return false
	}
	if len(hs) == 0 {
		delete(ids.holders, uid)
		delete(ids.owners, uid)
		return true
	}
	ids.holders[uid] = hs
	ids.owners[uid] = hs[len(hs)-1]
	return false
}

// identify admits a position report from s and updates its identity
// (protocol.md §1: every SA, not only the first). A report for the uid s
// already holds takes no lock; a new uid is checked against the bindings.
func (b *Broker) identify(s *Session, env *Envelope) error {
	now := b.opts.Now()
	env.at = now
	if cur := s.ident.Load(); cur != nil && cur.UID == env.Event.UID {
		s.observe(env, now)
		return nil
	}
	b.mu.Lock()
	bound, err := b.ids.check(env.Event.UID, s.info.User, b.opts.MaxUIDsPerUser)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	prev, _ := s.observe(env, now)
	if !s.isClosed() {
		b.ids.hold(s, env.Event.UID, prev)
	}
	b.mu.Unlock()
	if bound && b.opts.Bound != nil {
		b.opts.Bound(env.Event.UID, s.info.User)
	}
	if b.opts.ClientsChanged != nil {
		b.opts.ClientsChanged()
	}
	return nil
}

// isClosed reports whether the session was closed. It takes no lock (done
// is closed under qmu before the broker forgets the session).
func (s *Session) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}
