package federation

// Contacts (docs/federation.md "Contacts"): the official server tells a
// federate of each local client as a FederatedEvent carrying only a
// ContactListEntry — CREATE with its uid and callsign when the client first
// reports its position (DistributedFederationManager.java,
// addLocalContact; GroupFederationUtil.java sends the current ones to a
// federate that connects), DELETE with its uid when it leaves
// (ProtoBufHelper.java, delContact2protoBuf, which puts the departure's
// link type in callsign). Outpost sends the same for its clients and makes
// a received entry a remote contact: a session of the link identified by
// the entry's uid and callsign (so the connected-client registry and
// /Marti/api/contacts/all list it), which departs on DELETE or when the
// link ends.

import (
	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// maxAnnouncedContacts bounds the local clients a link remembers announcing.
const maxAnnouncedContacts = 64 << 10

// maxContactField bounds a received contact entry's uid and callsign.
const maxContactField = 255

// contactEntry is the contact entry that goes with ev (nil: none): a local
// client's position report whose callsign the federate was not told yet
// (CREATE, or UPDATE when it changed), or a local client's departure
// (DELETE). local says ev started here. Called by the writer only.
func (l *link) contactEntry(ev *cot.Event, local bool) *fedproto.ContactListEntry {
	if !local {
		return nil
	}
	if ev.Type == cot.TypeDelete && len(ev.Detail.Links) > 0 {
		lk := ev.Detail.Links[0]
		if _, ok := l.announced[lk.UID]; !ok {
			return nil
		}
		delete(l.announced, lk.UID)
		return &fedproto.ContactListEntry{Operation: fedproto.CRUD_DELETE, Uid: lk.UID, Callsign: lk.Type}
	}
	if !ev.IsSA() {
		return nil
	}
	cs := ev.Detail.Contact.Callsign
	prev, ok := l.announced[ev.UID]
	if ok && prev == cs {
		return nil
	}
	if !ok && len(l.announced) >= maxAnnouncedContacts {
		return nil
	}
	l.announced[ev.UID] = cs
	op := fedproto.CRUD_CREATE
	if ok {
		op = fedproto.CRUD_UPDATE
	}
	return &fedproto.ContactListEntry{Operation: op, Uid: ev.UID, Callsign: cs}
}

// queueContact queues a contact entry for the federate as fe's companion
// (its provenance, hops and groups).
func (l *link) queueContact(ct *fedproto.ContactListEntry, fe *fedproto.FederatedEvent) {
	m := &fedproto.FederatedEvent{Contact: ct, FederateGroups: fe.FederateGroups, FederateProvenance: fe.FederateProvenance,
		FederateHops: fe.FederateHops}
	select {
	case l.out <- m:
		l.stats.contactsOut.Add(1)
	default:
		l.stats.dropQueue.Add(1)
	}
}

// receiveContact handles a FederatedEvent that carries a contact entry and
// no event: CREATE and UPDATE make (or rename) the remote contact, DELETE
// makes it depart. Anything else is counted as ignored.
func (l *link) receiveContact(ct *fedproto.ContactListEntry, tags []string) {
	uid, cs := ct.GetUid(), ct.GetCallsign()
	if uid == "" || len(uid) > maxContactField || len(cs) > maxContactField {
		l.stats.ignored.Add(1)
		return
	}
	switch ct.GetOperation() {
	case fedproto.CRUD_DELETE:
		l.mu.Lock()
		c := l.contacts[uid]
		l.mu.Unlock()
		if c == nil {
			l.stats.ignored.Add(1)
			return
		}
		l.stats.contactsIn.Add(1)
		c.Sess.Close(broker.ReasonClientClosed)
	case fedproto.CRUD_CREATE, fedproto.CRUD_UPDATE:
		if cs == "" {
			l.stats.ignored.Add(1)
			return
		}
		// Listed to the local groups its federate groups map to (groups.go),
		// as its position reports are published to them.
		local := l.f.groupsOf(l.name).localGroups(tags)
		if local == 0 {
			l.stats.dropGroup.Add(1)
			return
		}
		c := l.contactOf(uid)
		if c == nil {
			l.stats.dropContacts.Add(1)
			return
		}
		l.stats.contactsIn.Add(1)
		l.pubMu.Lock()
		c.Sess.SetIn(local)
		l.pubMu.Unlock()
		l.mu.Lock()
		c.callsign = cs
		l.mu.Unlock()
		if err := c.Sess.Identify(uid, cs); err != nil {
			l.f.warn.Warn("federated contact refused", "federate", logx.Clip(l.name), "uid", logx.Clip(uid), "err", errString(err))
			c.Sess.Close(broker.ReasonClientClosed)
		}
	default:
		l.stats.ignored.Add(1)
	}
}
