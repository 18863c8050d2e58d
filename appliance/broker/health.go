package broker

// Closed reports whether Close has run: the broker refuses new sessions
// and routes nothing. It is the broker's part of the appliance's health
// check.
func (b *Broker) Closed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}
