package marti

// Video connections clients publish and list: /Marti/vcm in the XML ATAK's
// video manager reads and writes (<videoConnections><feed>...), and
// /Marti/api/video in the JSON of the official server's video API
// ({"videoConnections": [...]}). Both are views of one bounded table
// (store.VideoConnection): a feed posted in one form is listed in both.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// maxVideoBody bounds a posted list of video connections.
const maxVideoBody = 256 << 10

const videoError = "An error occurred accessing video connections."

// videoFeedJSON is a feed as the official server's video API shows it:
// numbers and flags as strings, unknown values null.
type videoFeedJSON struct {
	UUID              string  `json:"uuid"`
	Active            bool    `json:"active"`
	Alias             string  `json:"alias"`
	URL               string  `json:"url"`
	Order             *int    `json:"order"`
	MacAddress        string  `json:"macAddress"`
	RoverPort         string  `json:"roverPort"`
	IgnoreEmbeddedKLV string  `json:"ignoreEmbeddedKLV"`
	Source            *string `json:"source"`
	NetworkTimeout    string  `json:"networkTimeout"`
	BufferTime        string  `json:"bufferTime"`
	RTSPReliable      string  `json:"rtspReliable"`
	Thumbnail         *string `json:"thumbnail"`
	Classification    *string `json:"classification"`
	Latitude          *string `json:"latitude"`
	Longitude         *string `json:"longitude"`
	Fov               *string `json:"fov"`
	Heading           *string `json:"heading"`
	Range             *string `json:"range"`
	Width             *int    `json:"width"`
	Height            *int    `json:"height"`
	Bitrate           *int    `json:"bitrate"`
}

type videoConnJSON struct {
	UUID           string          `json:"uuid"`
	Active         bool            `json:"active"`
	Alias          string          `json:"alias"`
	Thumbnail      *string         `json:"thumbnail"`
	Classification *string         `json:"classification"`
	Feeds          []videoFeedJSON `json:"feeds"`
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func videoJSON(c store.VideoConnection) videoConnJSON {
	out := videoConnJSON{UUID: c.UID, Active: c.Active, Alias: c.Alias, Thumbnail: optString(c.Thumbnail),
		Classification: optString(c.Classification), Feeds: make([]videoFeedJSON, 0, len(c.Feeds))}
	for i, f := range c.Feeds {
		order := i
		out.Feeds = append(out.Feeds, videoFeedJSON{UUID: f.UID, Active: f.Active, Alias: f.Alias, URL: f.URL, Order: &order,
			MacAddress: f.MacAddress, RoverPort: strconv.Itoa(f.RoverPort), IgnoreEmbeddedKLV: strconv.FormatBool(f.IgnoreEmbeddedKLV),
			NetworkTimeout: strconv.Itoa(f.NetworkTimeout), BufferTime: strconv.Itoa(f.BufferTime), RTSPReliable: boolText(f.RTSPReliable)})
	}
	return out
}

// Posted JSON: flags and numbers may be strings or JSON values, absent
// fields take defaults, missing uuids are generated.
type videoFeedIn struct {
	UUID              string `json:"uuid"`
	Active            any    `json:"active"`
	Alias             string `json:"alias"`
	URL               string `json:"url"`
	MacAddress        string `json:"macAddress"`
	RoverPort         any    `json:"roverPort"`
	IgnoreEmbeddedKLV any    `json:"ignoreEmbeddedKLV"`
	NetworkTimeout    any    `json:"networkTimeout"`
	BufferTime        any    `json:"bufferTime"`
	RTSPReliable      any    `json:"rtspReliable"`
}

type videoConnIn struct {
	UUID           string        `json:"uuid"`
	Active         any           `json:"active"`
	Alias          string        `json:"alias"`
	Thumbnail      *string       `json:"thumbnail"`
	Classification *string       `json:"classification"`
	Feeds          []videoFeedIn `json:"feeds"`
}

// flexInt reads a whole number sent as a JSON number or a string; absent
// or "" is def.
func flexInt(field string, v any, def int) (int, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return def, nil
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
		if s == "" {
			return def, nil
		}
	default:
		return 0, httpapi.BadRequest(field, "must be a whole number")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, httpapi.BadRequest(field, "must be a whole number, not %q", httpapi.ClipValue(s))
	}
	return n, nil
}

// flexBool reads a flag sent as true/false, "true"/"false" or 1/0.
func flexBool(field string, v any, def bool) (bool, error) {
	switch x := v.(type) {
	case nil:
		return def, nil
	case bool:
		return x, nil
	case json.Number:
		v = x.String()
	}
	if s, ok := v.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "":
			return def, nil
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
	}
	return false, httpapi.BadRequest(field, "must be true or false")
}

// checkFeedURL accepts an absolute URL with a host (rtsp://, rtmp://, srt://,
// http(s)://, udp://...).
func checkFeedURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return httpapi.BadRequest(field, "must be an absolute URL such as rtsp://host:8554/path, not %q", httpapi.ClipValue(raw))
	}
	return nil
}

func (in videoConnIn) connection(field string) (store.VideoConnection, error) {
	c := store.VideoConnection{UID: in.UUID, Alias: in.Alias}
	if c.UID == "" {
		c.UID = uuid.NewString()
	}
	var err error
	if c.Active, err = flexBool(field+".active", in.Active, true); err != nil {
		return c, err
	}
	if in.Thumbnail != nil {
		c.Thumbnail = *in.Thumbnail
	}
	if in.Classification != nil {
		c.Classification = *in.Classification
	}
	for i, f := range in.Feeds {
		at := fmt.Sprintf("%s.feeds[%d]", field, i)
		vf := store.VideoFeed{UID: f.UUID, Alias: f.Alias, URL: f.URL, MacAddress: f.MacAddress}
		if vf.UID == "" {
			vf.UID = uuid.NewString()
		}
		if vf.Alias == "" {
			vf.Alias = c.Alias
		}
		if err := checkFeedURL(at+".url", f.URL); err != nil {
			return c, err
		}
		if vf.Active, err = flexBool(at+".active", f.Active, true); err != nil {
			return c, err
		}
		if vf.RoverPort, err = flexInt(at+".roverPort", f.RoverPort, -1); err != nil {
			return c, err
		}
		if vf.IgnoreEmbeddedKLV, err = flexBool(at+".ignoreEmbeddedKLV", f.IgnoreEmbeddedKLV, false); err != nil {
			return c, err
		}
		if vf.NetworkTimeout, err = flexInt(at+".networkTimeout", f.NetworkTimeout, 0); err != nil {
			return c, err
		}
		if vf.BufferTime, err = flexInt(at+".bufferTime", f.BufferTime, -1); err != nil {
			return c, err
		}
		if vf.RTSPReliable, err = flexBool(at+".rtspReliable", f.RTSPReliable, false); err != nil {
			return c, err
		}
		c.Feeds = append(c.Feeds, vf)
	}
	if err := c.Validate(); err != nil {
		return c, httpapi.InField(field, err)
	}
	return c, nil
}

// putVideo stores connections; field names the list in error messages.
func (h *Handler) putVideo(r *http.Request, conns []store.VideoConnection, field string) error {
	if len(conns) == 0 || len(conns) > store.MaxVideoBatch {
		return httpapi.BadRequest(field, "must hold 1 to %d connections", store.MaxVideoBatch)
	}
	if err := h.opts.Videos.PutVideoConnections(r.Context(), conns); err != nil {
		return httpapi.Internal(httpapi.InField(field, err), videoError)
	}
	for _, c := range conns {
		h.log.Info("video connection published", "uid", logx.Clip(c.UID), "alias", logx.Clip(c.Alias), "feeds", len(c.Feeds))
	}
	return nil
}

// videoList answers GET /Marti/api/video, written as the connections are
// read.
func (h *Handler) videoList(w http.ResponseWriter, r *http.Request) error {
	l := httpapi.NewListing(w, r, "application/json", `{"videoConnections":[`, "]}\n")
	err := h.opts.Videos.EachVideoConnection(r.Context(), func(c store.VideoConnection) error {
		return l.Item(videoJSON(c))
	})
	l.Finish(err, videoError)
	return nil
}

// videoPost answers POST /Marti/api/video {"videoConnections": [...]}: each
// connection is stored (replacing one with the same uuid) and the stored
// connections are answered in the same shape.
func (h *Handler) videoPost(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		VideoConnections []videoConnIn `json:"videoConnections"`
	}
	if err := httpapi.DecodeJSON(r, maxVideoBody, &body); err != nil {
		return err
	}
	if body.VideoConnections == nil {
		return httpapi.BadRequest("videoConnections", "required")
	}
	if len(body.VideoConnections) > store.MaxVideoBatch {
		return httpapi.BadRequest("videoConnections", "must hold 1 to %d connections", store.MaxVideoBatch)
	}
	conns := make([]store.VideoConnection, 0, len(body.VideoConnections))
	for i, in := range body.VideoConnections {
		c, err := in.connection(fmt.Sprintf("videoConnections[%d]", i))
		if err != nil {
			return httpapi.Internal(err, videoError)
		}
		conns = append(conns, c)
	}
	if err := h.putVideo(r, conns, "videoConnections"); err != nil {
		return err
	}
	out := make([]videoConnJSON, 0, len(conns))
	for _, c := range conns {
		out = append(out, videoJSON(c))
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		VideoConnections []videoConnJSON `json:"videoConnections"`
	}{out})
	return nil
}

// videoPut answers PUT /Marti/api/video/{uid}: one connection, stored under
// the path's uid.
func (h *Handler) videoPut(w http.ResponseWriter, r *http.Request) error {
	uid := r.PathValue("uid")
	if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
		return err
	}
	var in videoConnIn
	if err := httpapi.DecodeJSON(r, maxVideoBody, &in); err != nil {
		return err
	}
	in.UUID = uid
	c, err := in.connection("body")
	if err != nil {
		return httpapi.Internal(err, videoError)
	}
	if err := h.putVideo(r, []store.VideoConnection{c}, "body"); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, videoJSON(c))
	return nil
}

// videoByUID finds the path's connection (404 when there is none). Any
// other failure of the store is ours (500), whatever its kind.
func (h *Handler) videoByUID(r *http.Request) (store.VideoConnection, error) {
	uid := r.PathValue("uid")
	if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
		return store.VideoConnection{}, err
	}
	c, err := h.opts.Videos.VideoConnectionByUID(r.Context(), uid)
	if errors.Is(err, store.ErrNotFound) {
		return c, httpapi.Errorf(http.StatusNotFound, "uid: no video connection %s", strconv.Quote(httpapi.ClipValue(uid)))
	}
	if err != nil {
		return c, ours(err, videoError, "reading a video connection")
	}
	return c, nil
}

// videoGet answers GET /Marti/api/video/{uid}.
func (h *Handler) videoGet(w http.ResponseWriter, r *http.Request) error {
	c, err := h.videoByUID(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, videoJSON(c))
	return nil
}

// videoDelete answers DELETE /Marti/api/video/{uid}.
func (h *Handler) videoDelete(w http.ResponseWriter, r *http.Request) error {
	c, err := h.videoByUID(r)
	if err != nil {
		return err
	}
	if err := h.opts.Videos.DeleteVideoConnection(r.Context(), c.UID); err != nil && !errors.Is(err, store.ErrNotFound) {
		return ours(err, videoError, "deleting a video connection")
	}
	h.log.Info("video connection deleted", "uid", logx.Clip(c.UID))
	httpapi.WriteMessage(w, http.StatusOK, "video connection deleted")
	return nil
}
