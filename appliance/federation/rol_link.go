package federation

// Missions over ROL on a link (docs/federation.md "Missions over ROL"):
// what this server's clients change in public missions goes to every
// federate as ROL programs on ClientROLStream (listener side) and
// ServerROLStream (connecting side); what a federate sends is applied to
// the store (Config.Missions) and sent on to the other federates, with the
// provenance and hops of events and a memory of recent programs against
// copies over another path.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// rolQueue bounds the ROL messages queued for one link (full: dropped and
// counted); rolWork the local changes waiting to be made into ROL.
const (
	rolQueue = 64
	rolWork  = 256
)

// rolApplyTimeout bounds applying one received program to the store.
const rolApplyTimeout = 30 * time.Second

// maxPayloads bounds the payloads of a received ROL.
const maxPayloads = 4

// maxFile is the largest file a ROL carries: the data package upload limit,
// within the gRPC message limit (less room for the program).
func (f *Federation) maxFile() int64 {
	m := int64(f.cfg.MaxMessage) - MaxProgram - 1024
	if f.cfg.MaxFileBytes > 0 && f.cfg.MaxFileBytes < m {
		m = f.cfg.MaxFileBytes
	}
	return m
}

// MissionChanged takes a change of a mission made here for the federates.
// It never waits: the change is made into ROL by a worker; when too many
// wait, it is dropped and counted on every federate.
func (f *Federation) MissionChanged(ch MissionChange) {
	if f.cfg.Missions == nil || !federatedTool(ch.Mission.Tool) {
		return
	}
	select {
	case f.rolWork <- ch:
	default:
		f.mu.Lock()
		for _, s := range f.stats {
			s.rolDropQueue.Add(1)
		}
		f.mu.Unlock()
		f.warn.Warn("mission change not federated: too many waiting", "mission", logx.Clip(ch.Mission.Name))
	}
}

// rolWorker makes local mission changes into ROL and sends them to every
// link, until federation shuts down.
func (f *Federation) rolWorker() {
	for {
		select {
		case <-f.stop:
			return
		case ch := <-f.rolWork:
			for _, r := range f.changeROL(ch, f.cfg.Now()) {
				f.broadcastROL(f.ownROL(r), nil)
			}
		}
	}
}

// ownROL marks r as starting here: this server's provenance and hop
// limit, remembered (a copy coming back is a duplicate).
func (f *Federation) ownROL(r *fedproto.ROL) *fedproto.ROL {
	r.FederateGroups = anonGroups
	r.FederateProvenance = []*fedproto.FederateProvenance{f.self}
	r.FederateHops = &fedproto.FederateHops{MaxHops: f.cfg.MaxHops, CurrentHops: 1}
	f.rolRecent.add(rolKey(r), &origin{}, f.cfg.Now())
	return r
}

// changeROL is ch, made at at, as the official server writes it: a new mission's
// `create mission`; a deleted one's `delete mission`; added files' `create
// resource` with the file's bytes (each first, so the federate has the
// file when the mission refers to it), then `update mission` ADD_CONTENT;
// a removed file or uid's `update mission` REMOVE_CONTENT.
func (f *Federation) changeROL(ch MissionChange, at time.Time) []*fedproto.ROL {
	m := ch.Mission
	one := func(op, res string, params any) []*fedproto.ROL {
		p, err := program(op, res, params)
		if err != nil {
			return nil
		}
		return []*fedproto.ROL{{Program: p}}
	}
	switch ch.Kind {
	case MissionCreated:
		return one("create", "mission", metadataOf(m))
	case MissionDeleted:
		return one("delete", "mission", missionMetadata{Type: "MissionMetadata", Name: m.Name, CreatorUID: ch.By, Tool: "public", GUID: m.GUID})
	case ContentAdded, ContentRemoved:
	default:
		return nil
	}
	up := missionUpdate{Content: missionContent{Hashes: nonNil(ch.Hashes), UIDs: nonNil(ch.UIDs)}, CreatorUID: ch.By,
		ChangeType: changeAddContent, MissionName: m.Name, MissionCreatorUID: m.CreatorUID, MissionChatRoom: m.ChatRoom,
		MissionTool: toolOf(m.Tool), MissionDescription: m.Description,
		Date: strconv.AppendInt(nil, at.UnixMilli(), 10)}
	var out []*fedproto.ROL
	if ch.Kind == ContentRemoved {
		up.ChangeType = changeRemoveContent
		return one("update", "mission", up)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rolApplyTimeout)
	defer cancel()
	for _, h := range ch.Hashes {
		meta, data, err := f.cfg.Missions.File(ctx, h, f.maxFile())
		if err != nil {
			f.warn.Warn("mission file not federated", "mission", logx.Clip(m.Name), "hash", logx.Clip(h), "err", errString(err))
			continue
		}
		p, err := program("create", "resource", resourceOf(meta))
		if err != nil {
			continue
		}
		// The payload's timestamp is the change's time: the same file sent
		// again for another mission is not taken for a copy (rolKey).
		out = append(out, &fedproto.ROL{Program: p, Payload: []*fedproto.BinaryBlob{{Data: data, Filename: meta.Name,
			Timestamp: at.UnixMilli()}}})
	}
	return append(out, one("update", "mission", up)...)
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func toolOf(t string) string {
	if t == "" {
		return "public"
	}
	return t
}

func metadataOf(m MissionMeta) missionMetadata {
	return missionMetadata{Type: "MissionMetadata", Name: m.Name, CreatorUID: m.CreatorUID, Description: m.Description,
		ChatRoom: m.ChatRoom, Tool: toolOf(m.Tool), BBox: m.BBox, Path: m.Path, Classification: m.Classification,
		BaseLayer: m.BaseLayer, Expiration: m.Expiration, InviteOnly: m.InviteOnly, GUID: m.GUID}
}

// cotTimeMillis is the official server's time format in resource metadata
// (Constants.COT_DATE_FORMAT).
const cotTimeMillis = "2006-01-02T15:04:05.000Z"

func resourceOf(f FileMeta) resourceMeta {
	r := resourceMeta{Filename: f.Name, Keywords: nonNil(f.Keywords), MIMEType: f.MIMEType, Name: f.Name, Submitter: f.Submitter,
		UID: f.UID, CreatorUID: f.CreatorUID, Hash: f.Hash, Size: f.Size, Tool: "public"}
	if !f.SubmittedAt.IsZero() {
		r.SubmissionTime = f.SubmittedAt.UTC().Format(cotTimeMillis)
	}
	return r
}

// broadcastROL queues r for every link except from, and those its
// provenance passed through.
func (f *Federation) broadcastROL(r *fedproto.ROL, from *link) {
	f.mu.Lock()
	ls := make([]*link, 0, len(f.links))
	for _, l := range f.links {
		if l != from {
			ls = append(ls, l)
		}
	}
	f.mu.Unlock()
	for _, l := range ls {
		if p := l.peer(); p != "" && slices.ContainsFunc(r.GetFederateProvenance(), func(x *fedproto.FederateProvenance) bool {
			return x.GetFederationServerId() == p
		}) {
			continue
		}
		select {
		case l.rolOut <- r:
		default:
			l.stats.rolDropQueue.Add(1)
			f.warn.Warn("federate ROL queue full: mission change dropped", "federate", logx.Clip(l.name))
		}
	}
}

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

// sendROLLoop sends what the federate missed (replayROL), then what is
// queued for the link, on send until the link or ctx ends.
func (l *link) sendROLLoop(ctx context.Context, send func(*fedproto.ROL) error) error {
	if err := l.replayROL(ctx, send); err != nil {
		return err
	}
	for {
		select {
		case r := <-l.rolOut:
			if err := send(r); err != nil {
				return err
			}
			l.stats.rolOut.Add(1)
		case <-l.done:
			return errors.New("link closed")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maxReplay bounds the changes replayed to a federate that connects.
const maxReplay = 10000

// replayROL sends the federate the changes clients made here to public
// missions while it was not connected, as the official server's
// MissionDisruptionManager does: those since its last link ended, or, for
// its first link since this server started, those of the last ROLReplay.
// Each change goes as when it was made (its time in `date` and the
// payload's timestamp). What federates made is not replayed: their own
// servers replay it.
func (l *link) replayROL(ctx context.Context, send func(*fedproto.ROL) error) error {
	f := l.f
	if f.cfg.Missions == nil || f.cfg.ROLReplay < 0 {
		return nil
	}
	since := f.cfg.Now().Add(-f.cfg.ROLReplay)
	if down := l.stats.downAt.Load(); down != 0 {
		since = time.UnixMilli(down)
	}
	n := 0
	err := f.cfg.Missions.LocalChanges(ctx, since, maxReplay, func(ch MissionChange, at time.Time) error {
		for _, r := range f.changeROL(ch, at) {
			if err := send(f.ownROL(r)); err != nil {
				return err
			}
			l.stats.rolOut.Add(1)
			n++
		}
		return nil
	})
	if n > 0 {
		f.log.Info("mission changes replayed to federate", "federate", logx.Clip(l.name), "rol", n, "since", since.UTC().Format(time.RFC3339))
	}
	if err != nil && ctx.Err() == nil {
		f.warn.Warn("mission changes not replayed to federate", "federate", logx.Clip(l.name), "err", errString(err))
		return nil // the live changes still go
	}
	return err
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
	ctx, cancel := context.WithTimeout(context.Background(), rolApplyTimeout)
	defer cancel()
	forward := true
	for _, st := range sts {
		switch err := l.apply(ctx, st, r.GetPayload()); {
		case err == nil:
			l.stats.rolApplied.Add(1)
		case errors.Is(err, errIgnored):
			l.stats.rolIgnored.Add(1)
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
	f.broadcastROL(fw, l)
}

// errIgnored: a valid statement that Outpost does not apply (another
// resource or change, a mission that is not public).
var errIgnored = errors.New("ROL statement not applied here")

// apply applies one statement to the store.
func (l *link) apply(ctx context.Context, st statement, payload []*fedproto.BinaryBlob) error {
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
			return ms.DeleteMission(ctx, md.Name, md.CreatorUID, l.name)
		}
		return ms.CreateMission(ctx, MissionMeta{Name: md.Name, GUID: md.GUID, CreatorUID: md.CreatorUID, Description: md.Description,
			ChatRoom: md.ChatRoom, Tool: toolOf(md.Tool), BaseLayer: md.BaseLayer, BBox: md.BBox, Path: md.Path,
			Classification: md.Classification, Expiration: md.Expiration, InviteOnly: md.InviteOnly}, l.name)
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
				Tool: toolOf(up.MissionTool), Description: up.MissionDescription}
			return ms.AddContent(ctx, m, up.Content.Hashes, up.Content.UIDs, up.CreatorUID, l.name)
		case changeRemoveContent:
			var hash, uid string // the first of each, as the official server reads it
			if len(up.Content.Hashes) > 0 {
				hash = up.Content.Hashes[0]
			}
			if len(up.Content.UIDs) > 0 {
				uid = up.Content.UIDs[0]
			}
			return ms.RemoveContent(ctx, up.MissionName, hash, uid, up.CreatorUID, l.name)
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
			CreatorUID: rm.CreatorUID, Keywords: rm.Keywords, Size: int64(len(data)), SubmittedAt: at}, data, l.name); err != nil {
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

// rolStreams opens the ROL streams of an outbound link (after its event
// streams) and serves them until ctx ends. A server without them
// (Unimplemented) or whose ROL streams fail leaves the link up: missions
// only stop crossing.
func (f *Federation) rolStreams(ctx context.Context, cli fedproto.FederatedChannelClient, sub *fedproto.Subscription, l *link, wg *sync.WaitGroup) {
	in, err := cli.ClientROLStream(ctx, sub)
	if err == nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.recvROLLoop(in.Recv); err != nil && status.Code(err) != codes.Canceled && !errors.Is(err, io.EOF) {
				f.log.Debug("federate ROL stream ended", "federate", logx.Clip(l.name), "err", errString(err))
			}
		}()
	}
	out, err := cli.ServerROLStream(ctx)
	if err != nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := l.sendROLLoop(ctx, out.Send); err != nil && status.Code(err) != codes.Canceled {
			f.log.Debug("ROL stream to federate ended", "federate", logx.Clip(l.name), "err", errString(err))
		}
	}()
}
