package federation

// Missions over ROL, sending (docs/federation.md "Missions over ROL"): what
// this server's clients change in public missions goes to every federate
// as ROL programs on ClientROLStream (listener side) and ServerROLStream
// (connecting side); a federate that connects first gets what it missed.
// Receiving is rol_receive.go; the program text is rol.go.

import (
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
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
				f.broadcastROL(f.ownROL(r), nil, ch.Mission.Groups)
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
func (f *Federation) broadcastROL(r *fedproto.ROL, from *link, groups uint64) {
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
		rr := l.rolFor(r, groups)
		if rr == nil {
			continue
		}
		select {
		case l.rolOut <- rr:
		default:
			l.stats.rolDropQueue.Add(1)
			f.warn.Warn("federate ROL queue full: mission change dropped", "federate", logx.Clip(l.name))
		}
	}
}

// rolFor is r as it goes to l's federate, tagged with the federate groups
// a mission of the local groups groups goes out as there (nil: it does
// not go: groups.go rolGroups). The program and payloads are shared.
func (l *link) rolFor(r *fedproto.ROL, groups uint64) *fedproto.ROL {
	fg := l.f.groupsOf(l.name).rolGroups(groups)
	if fg == nil {
		return nil
	}
	if slices.Equal(fg, r.GetFederateGroups()) {
		return r
	}
	return &fedproto.ROL{Program: r.GetProgram(), Payload: r.GetPayload(), FederateGroups: fg,
		FederateProvenance: r.GetFederateProvenance(), FederateHops: r.GetFederateHops(),
		FederateGroupHopLimits: r.GetFederateGroupHopLimits()}
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
			r = l.rolFor(f.ownROL(r), ch.Mission.Groups)
			if r == nil {
				continue // not for this federate's groups
			}
			if err := send(r); err != nil {
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
