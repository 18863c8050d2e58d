package broker

import "outpost/appliance/cot"

// LastSA is the session's latest position report (read-only), nil before
// its first: where the client is, its type, course and stale time.
func (s *Session) LastSA() *cot.Event {
	if env := s.lastSA.Load(); env != nil {
		return env.Event
	}
	return nil
}
