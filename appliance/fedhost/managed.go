package fedhost

// Federates managed at run time (docs/federation.md "Managing federates"):
// the management API and `outpost federate add|remove|trust` write the
// store's federates table; the running server reads it again after each
// change the API makes and every federatesPollInterval (a change the
// command line made from another process), and hands it to federation,
// which starts and stops what changed.

import (
	"context"
	"time"

	"outpost/appliance/federation"
	"outpost/appliance/store"
)

// federatesPollInterval is how soon a change made on the command line is
// picked up (the revocation list's interval).
const federatesPollInterval = 2 * time.Second

// syncFederates gives federation the store's federates.
func (h *Host) syncFederates(ctx context.Context) {
	list, err := h.st.Federates().List(ctx)
	if err != nil {
		h.log.Warn("reading the managed federates", "err", err)
		return
	}
	ms := make([]federation.Managed, 0, len(list))
	for _, f := range list {
		ms = append(ms, federation.Managed{Name: f.Name, Address: f.Address, CAPEM: f.CAPEM, Enabled: f.Enabled,
			Pin: f.Pin, BackoffMin: f.BackoffMin, BackoffMax: f.BackoffMax, V1: f.Protocol == store.FederateV1})
	}
	h.fed.SetManaged(ms)
	h.syncFederateGroups(ctx)
}

// Run syncs the managed federates until ctx ends (the appliance runs it
// once, when federation is on).
func (h *Host) Run(ctx context.Context) {
	t := time.NewTicker(federatesPollInterval)
	defer t.Stop()
	for {
		h.syncFederates(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Changed is the management API's hook after it changed the federates
// table.
func (h *Host) Changed() {
	if h != nil {
		h.syncFederates(context.Background())
	}
}

// fedSpool is federation's persistent outbound queue in the store
// (federation.Spool), within federationQueueAge and federationQueueBytes.
type fedSpool struct {
	fs     *store.Federates
	bounds store.QueueBounds
}

// spoolTimeout bounds one queue operation.
const spoolTimeout = 10 * time.Second

func (s fedSpool) Append(federate string, items [][]byte) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), spoolTimeout)
	defer cancel()
	return s.fs.QueueAppend(ctx, federate, items, time.Now(), s.bounds)
}

func (s fedSpool) Take(federate string, max int) ([]int64, [][]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), spoolTimeout)
	defer cancel()
	got, err := s.fs.QueueTake(ctx, federate, max)
	ids, items := make([]int64, len(got)), make([][]byte, len(got))
	for i, it := range got {
		ids[i], items[i] = it.ID, it.Body
	}
	return ids, items, err
}

func (s fedSpool) Delete(federate string, upTo int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), spoolTimeout)
	defer cancel()
	return s.fs.QueueDelete(ctx, federate, upTo)
}
