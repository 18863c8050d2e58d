package federation

// Missions over ROL, receiving (docs/federation.md "Missions over ROL"):
// what a federate sends is checked, applied to the store (Config.Missions)
// and sent on to the other federates, with the provenance and hops of
// events and a memory of recent programs against copies over another path.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// rolApplyTimeout bounds applying one received program to the store.
const rolApplyTimeout = 30 * time.Second

// maxPayloads bounds the payloads of a received ROL.
const maxPayloads = 4

// rolKey identifies a ROL program with its payloads and their
// timestamps (a copy over another path of a loop has the same).
func rolKey(r *fedproto.ROL) uint64 {
	h := sha256.New()
	h.Write([]byte(r.GetProgram()))
	for _, p := range r.GetPayload() {
		s := sha256.Sum256(p.GetData())
		h.Write(s[:])
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(p.GetTimestamp())))
	}
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// recvROLLoop applies what the federate sends until its stream ends.
func (l *link) recvROLLoop(recv func() (*fedproto.ROL, error)) error {
	for {
		r, err := recv()
		if err != nil {
			return err
		}
		l.stats.lastContact.Store(l.f.cfg.Now().Unix())
		l.receiveROL(r)
	}
}

// receiveROL checks one ROL from the federate, applies it and sends it on.
// What is refused is dropped and counted; the link stays up.
func (l *link) receiveROL(r *fedproto.ROL) {
	f := l.f
	l.stats.rolIn.Add(1)
	if slices.ContainsFunc(r.GetFederateProvenance(), func(p *fedproto.FederateProvenance) bool {
		return p.GetFederationServerId() == f.cfg.ServerID
	}) {
		l.stats.rolDropLoop.Add(1)
		return
	}
	h := r.GetFederateHops()
	if h.GetMaxHops() > 0 && h.GetCurrentHops() > h.GetMaxHops() {
		l.stats.rolDropLoop.Add(1)
		return
	}
	if len(r.GetProgram()) > MaxProgram || len(r.GetPayload()) > maxPayloads || slices.ContainsFunc(r.GetPayload(), func(p *fedproto.BinaryBlob) bool {
		return int64(len(p.GetData())) > f.maxFile()
	}) {
		l.stats.rolDropSize.Add(1)
		f.warn.Warn("federated ROL refused: too large", "federate", logx.Clip(l.name), "program", len(r.GetProgram()), "payloads", len(r.GetPayload()))
		return
	}
	sts, err := parseProgram(r.GetProgram())
	if err != nil {
		l.stats.rolDropMalformed.Add(1)
		f.warn.Warn("federated ROL refused", "federate", logx.Clip(l.name), "err", logx.Clip(err.Error()))
		return
	}
	// One program at a time, from taking it as new to having applied it:
	// a copy over another path waits until the first is applied (the file
	// of a `create resource` is stored before the copy of the `update
	// mission` that follows it on the other path adds it).
	f.rolMu.Lock()
	defer f.rolMu.Unlock()
	if !f.rolRecent.add(rolKey(r), &origin{}, f.cfg.Now()) {
		l.stats.rolDropDup.Add(1)
		return
	}
	if f.cfg.Missions == nil {
		l.stats.rolIgnored.Add(1)
		return
	}
	// The local groups its missions and files go to (groups.go): none, and
	// it is dropped, counted.
	groups := f.groupsOf(l.name).localGroups(r.GetFederateGroups())
	if groups == 0 {
		l.stats.rolDropGroup.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rolApplyTimeout)
	defer cancel()
	forward := true
	for _, st := range sts {
		switch err := l.apply(ctx, st, r.GetPayload(), groups); {
		case err == nil:
			l.stats.rolApplied.Add(1)
		case errors.Is(err, errIgnored):
			l.stats.rolIgnored.Add(1)
		case errors.Is(err, ErrGroups):
			l.stats.rolDropGroup.Add(1)
			forward = false
		case errors.Is(err, errMalformed):
			l.stats.rolDropMalformed.Add(1)
			forward = false
			f.warn.Warn("federated ROL refused", "federate", logx.Clip(l.name), "err", logx.Clip(err.Error()))
		default:
			l.stats.rolFailed.Add(1)
			f.warn.Warn("federated ROL not applied", "federate", logx.Clip(l.name), "op", st.op+" "+st.resource, "err", logx.Clip(err.Error()))
		}
	}
	if !forward {
		return
	}
	next := h.GetCurrentHops() + 1
	maxHops := h.GetMaxHops()
	if h == nil {
		maxHops = -1
	}
	if maxHops > 0 && next > maxHops {
		return
	}
	fw := &fedproto.ROL{Program: r.GetProgram(), Payload: r.GetPayload(), FederateGroups: anonGroups,
		FederateProvenance: append(slices.Clip(r.GetFederateProvenance()), f.self),
		FederateHops:       &fedproto.FederateHops{MaxHops: maxHops, CurrentHops: next}}
	f.broadcastROL(fw, l, groups)
}

// errIgnored: a valid statement that Outpost does not apply (another
// resource or change, a mission that is not public).
var errIgnored = errors.New("ROL statement not applied here")

// apply applies one statement to the store.
// groups is the mask of the local groups the federate's missions and files
// go to.
func (l *link) apply(ctx context.Context, st statement, payload []*fedproto.BinaryBlob, groups uint64) error {
	ms := l.f.cfg.Missions
	switch st.resource + " " + st.op {
	case "mission create", "mission delete":
		var md missionMetadata
		if err := decodeParams(st.params, &md); err != nil {
			return err
		}
		if md.Name == "" {
			return errors.Join(errMalformed, errors.New("mission without a name"))
		}
		if !federatedTool(md.Tool) {
			return errIgnored
		}
		if st.op == "delete" {
			return ms.DeleteMission(ctx, md.Name, groups, md.CreatorUID, l.name)
		}
		return ms.CreateMission(ctx, MissionMeta{Name: md.Name, GUID: md.GUID, CreatorUID: md.CreatorUID, Description: md.Description,
			ChatRoom: md.ChatRoom, Tool: toolOf(md.Tool), BaseLayer: md.BaseLayer, BBox: md.BBox, Path: md.Path,
			Classification: md.Classification, Expiration: md.Expiration, InviteOnly: md.InviteOnly, Groups: groups}, l.name)
	case "mission update":
		var up missionUpdate
		if err := decodeParams(st.params, &up); err != nil {
			return errIgnored // another kind of mission update (layers, logs, external data)
		}
		if up.MissionName == "" || !federatedTool(up.MissionTool) {
			return errIgnored
		}
		for _, hash := range up.Content.Hashes {
			if !isHash(hash) {
				return errors.Join(errMalformed, errors.New("content hash is not a SHA-256"))
			}
		}
		switch up.ChangeType {
		case changeAddContent:
			m := MissionMeta{Name: up.MissionName, CreatorUID: up.MissionCreatorUID, ChatRoom: up.MissionChatRoom,
				Tool: toolOf(up.MissionTool), Description: up.MissionDescription, Groups: groups}
			return ms.AddContent(ctx, m, up.Content.Hashes, up.Content.UIDs, up.CreatorUID, l.name)
		case changeRemoveContent:
			var hash, uid string // the first of each, as the official server reads it
			if len(up.Content.Hashes) > 0 {
				hash = up.Content.Hashes[0]
			}
			if len(up.Content.UIDs) > 0 {
				uid = up.Content.UIDs[0]
			}
			return ms.RemoveContent(ctx, up.MissionName, groups, hash, uid, up.CreatorUID, l.name)
		}
		return errIgnored
	case "resource create":
		var rm resourceMeta
		if err := decodeParams(st.params, &rm); err != nil {
			return err
		}
		if len(payload) == 0 {
			return errIgnored // metadata alone: nothing to store
		}
		data := payload[0].GetData()
		sum := sha256.Sum256(data)
		got := hex.EncodeToString(sum[:])
		if !isHash(rm.Hash) || strings.ToLower(rm.Hash) != got {
			return errors.Join(errMalformed, errors.New("the file's bytes do not have its hash"))
		}
		if has, err := ms.HasFile(ctx, got); err != nil {
			return err
		} else if has {
			l.stats.filesKnown.Add(1) // stored once
			return nil
		}
		name := rm.Name
		if name == "" {
			name = rm.Filename
		}
		at, _ := time.Parse(cotTimeMillis, rm.SubmissionTime)
		if err := ms.PutFile(ctx, FileMeta{Hash: got, UID: rm.UID, Name: name, MIMEType: rm.MIMEType, Submitter: rm.Submitter,
			CreatorUID: rm.CreatorUID, Keywords: rm.Keywords, Size: int64(len(data)), SubmittedAt: at, Groups: groups}, data, l.name); err != nil {
			return err
		}
		l.stats.filesStored.Add(1)
		return nil
	}
	return errIgnored
}

// isHash reports whether s is a SHA-256 in hex.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
