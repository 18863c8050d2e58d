package marti

// A mission as a mission package (api-marti.md "Mission archive"): GET
// .../missions/{name}/archive, the official server's getMissionArchive
// (MissionApi; its MissionServiceDefaultImpl.archiveMission lays the zip
// out), which node-tak's Mission.getArchive reads. The zip holds
// cot/<uid>.cot, the latest stored event of each of the mission's uids,
// contents/<n>_<name>, each file of the mission the caller may read, and
// MANIFEST/manifest.xml (MissionPackageManifest version 2: the mission's
// parameters, one Content per entry, the mission's groups and default
// role). It is written as it is read, one file at a time: a fault after
// the answer began cuts the connection.

import (
	"archive/zip"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/logx"
	"outpost/appliance/store"
)

type archiveParam struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type archiveContent struct {
	ZipEntry string        `xml:"zipEntry,attr"`
	Ignore   bool          `xml:"ignore,attr"`
	Param    *archiveParam `xml:"Parameter,omitempty"`
}

type archiveManifest struct {
	XMLName  xml.Name         `xml:"MissionPackageManifest"`
	Version  string           `xml:"version,attr"`
	Params   []archiveParam   `xml:"Configuration>Parameter"`
	Contents []archiveContent `xml:"Contents>Content"`
	Groups   []struct {
		Name string `xml:"name,attr"`
	} `xml:"Groups>Group,omitempty"`
	Role *struct {
		Name        string `xml:"name,attr"`
		Permissions []struct {
			Name string `xml:"name,attr"`
		} `xml:"Permission"`
	} `xml:"Role,omitempty"`
}

// missionArchive answers GET .../missions/{mission_id}/archive.
func (h *Handler) missionArchive(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	ctx := r.Context()
	events, err := h.opts.Missions.MissionCoT(ctx, m.Name)
	if err != nil {
		return err
	}
	contents, err := h.opts.Missions.MissionContents(ctx, m.ID)
	if err != nil {
		return err
	}
	// The files first resolved, so a file the caller may not read is left
	// out before anything is written.
	var files []store.DataPackage
	for _, c := range contents {
		if p, err := h.readablePackage(r, c.Data.Hash); err == nil {
			files = append(files, p)
		}
	}
	man := archiveManifest{Version: "2", Params: []archiveParam{
		{"uid", uuid.NewString()}, {"name", m.Name}, {"mission_guid", m.GUID}, {"creatorUid", m.CreatorUID},
		{"create_time", strconv.FormatInt(m.Created.UnixMilli(), 10)}, {"expiration", strconv.FormatInt(m.Expiration, 10)},
		{"chatroom", m.ChatRoom}, {"description", m.Description}, {"tool", m.Tool},
		{"onReceiveImport", "true"}, {"onReceiveDelete", "false"}, {"mission_name", m.Name}, {"mission_label", m.Name},
	}}
	groups := m.Groups
	if len(groups) == 0 {
		groups = []string{store.AnonGroupName} // access.md "Missions": a mission without groups is __ANON__'s
	}
	for _, g := range groups {
		man.Groups = append(man.Groups, struct {
			Name string `xml:"name,attr"`
		}{g})
	}
	if m.DefaultRole != "" {
		man.Role = &struct {
			Name        string `xml:"name,attr"`
			Permissions []struct {
				Name string `xml:"name,attr"`
			} `xml:"Permission"`
		}{Name: m.DefaultRole}
		for _, p := range store.RolePermissions(m.DefaultRole) {
			man.Role.Permissions = append(man.Role.Permissions, struct {
				Name string `xml:"name,attr"`
			}{p})
		}
	}

	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(m.Name)+`.zip"`)
	w.WriteHeader(http.StatusOK)
	zw := zip.NewWriter(w)
	entry := func(name string, body func(io.Writer) error) error {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Unix(0, 0).UTC()})
		if err != nil || body == nil {
			return err
		}
		return body(f)
	}
	fail := func(err error) error {
		if r.Context().Err() == nil {
			h.log.Error("mission archive failed after its answer began; connection cut", "mission", logx.Clip(m.Name), "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	for _, dir := range []string{"cot/", "contents/"} {
		if err := entry(dir, nil); err != nil {
			return fail(err)
		}
	}
	for _, e := range events {
		name := "cot/" + archiveName(e.UID) + ".cot"
		if err := entry(name, func(f io.Writer) error { _, err := f.Write(e.XML); return err }); err != nil {
			return fail(err)
		}
		man.Contents = append(man.Contents, archiveContent{ZipEntry: name, Param: &archiveParam{"uid", e.UID}})
	}
	for i, p := range files {
		name := fmt.Sprintf("contents/%d_%s", i, archiveName(p.Name))
		err := entry(name, func(f io.Writer) error {
			br, err := h.opts.Files.OpenBlob(ctx, p.BlobID)
			if err != nil {
				return err
			}
			defer br.Close()
			_, err = io.Copy(f, br)
			return err
		})
		if err != nil {
			return fail(err)
		}
		man.Contents = append(man.Contents, archiveContent{ZipEntry: name})
	}
	doc, err := xml.MarshalIndent(man, "", "  ")
	if err == nil {
		err = entry("MANIFEST/", nil)
	}
	if err == nil {
		err = entry("MANIFEST/manifest.xml", func(f io.Writer) error {
			_, err := io.WriteString(f, xml.Header+string(doc))
			return err
		})
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return fail(err)
	}
	h.log.Info("mission archive sent", "mission", logx.Clip(m.Name), "events", len(events), "files", len(files))
	return nil
}

// archiveName is a uid or file name as a zip entry's last part: no
// directory separators, no leading dots, nothing but printable characters.
func archiveName(s string) string {
	s = strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			return '_'
		}
		return c
	}, s)
	s = strings.TrimLeft(s, ".")
	if s == "" {
		return "_"
	}
	return s
}
