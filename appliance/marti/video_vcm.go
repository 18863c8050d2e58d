package marti

// /Marti/vcm: video connections in the XML of ATAK's video manager
// (<videoConnections><feed>...</feed></videoConnections>), a view of the
// same table as /Marti/api/video (video.go).

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// vcmFeed is one <feed> of ATAK's video connection XML.
type vcmFeed struct {
	XMLName                   xml.Name `xml:"feed"`
	Protocol                  string   `xml:"protocol"`
	Alias                     string   `xml:"alias"`
	UID                       string   `xml:"uid"`
	Address                   string   `xml:"address"`
	Port                      string   `xml:"port"`
	RoverPort                 string   `xml:"roverPort"`
	IgnoreEmbeddedKLV         string   `xml:"ignoreEmbeddedKLV"`
	PreferredMacAddress       string   `xml:"preferredMacAddress"`
	PreferredInterfaceAddress string   `xml:"preferredInterfaceAddress"`
	Path                      string   `xml:"path"`
	Buffer                    string   `xml:"buffer"`
	Timeout                   string   `xml:"timeout"`
	RTSPReliable              string   `xml:"rtspReliable"`
}

type vcmDoc struct {
	XMLName xml.Name  `xml:"videoConnections"`
	Feeds   []vcmFeed `xml:"feed"`
}

// feedXML splits a feed's URL into the XML's protocol, address, port and
// path.
func feedXML(f store.VideoFeed) vcmFeed {
	x := vcmFeed{Alias: f.Alias, UID: f.UID, RoverPort: strconv.Itoa(f.RoverPort), IgnoreEmbeddedKLV: strconv.FormatBool(f.IgnoreEmbeddedKLV),
		PreferredMacAddress: f.MacAddress, PreferredInterfaceAddress: f.InterfaceAddress, Buffer: strconv.Itoa(f.BufferTime),
		Timeout: strconv.Itoa(f.NetworkTimeout), RTSPReliable: boolText(f.RTSPReliable)}
	if u, err := url.Parse(f.URL); err == nil && u.Host != "" {
		x.Protocol, x.Address, x.Port, x.Path = u.Scheme, u.Hostname(), u.Port(), u.EscapedPath()
		if u.RawQuery != "" {
			x.Path += "?" + u.RawQuery
		}
	} else {
		x.Address = f.URL
	}
	return x
}

// vcmList answers GET /Marti/vcm: every feed of every connection, written
// as the connections are read.
func (h *Handler) vcmList(w http.ResponseWriter, r *http.Request) error {
	l := httpapi.NewListing(w, r, "application/xml; charset=utf-8", xml.Header+"<videoConnections>", "</videoConnections>")
	err := h.opts.Videos.EachVideoConnection(r.Context(), func(c store.VideoConnection) error {
		for _, f := range c.Feeds {
			b, err := xml.Marshal(feedXML(f))
			if err != nil {
				return err
			}
			if err := l.Raw(b); err != nil {
				return err
			}
		}
		return nil
	})
	l.Finish(err, videoError)
	return nil
}

// vcmPost answers POST /Marti/vcm: each <feed> becomes a connection of its
// own (uid the feed's), replacing one with the same uid.
func (h *Handler) vcmPost(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxVideoBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return httpapi.Errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", maxVideoBody)
	}
	if err != nil {
		return httpapi.BadRequest("body", "could not be read")
	}
	var doc vcmDoc
	if err := xml.Unmarshal(body, &doc); err != nil {
		return httpapi.BadRequest("body", "must be a <videoConnections> document with <feed> elements: %s", httpapi.ClipValue(err.Error()))
	}
	conns := make([]store.VideoConnection, 0, len(doc.Feeds))
	for i, x := range doc.Feeds {
		c, err := vcmConnection(fmt.Sprintf("feed[%d]", i), x)
		if err != nil {
			return httpapi.Internal(err, videoError)
		}
		conns = append(conns, c)
	}
	if err := h.putVideo(r, conns, "feed"); err != nil {
		return err
	}
	httpapi.WriteText(w, http.StatusOK, "")
	return nil
}

// vcmConnection turns one posted <feed> into a connection of its own.
func vcmConnection(field string, x vcmFeed) (store.VideoConnection, error) {
	trim := strings.TrimSpace
	f := store.VideoFeed{UID: trim(x.UID), Alias: trim(x.Alias), Active: true, MacAddress: trim(x.PreferredMacAddress),
		InterfaceAddress: trim(x.PreferredInterfaceAddress)}
	if f.UID == "" {
		f.UID = uuid.NewString()
	}
	proto, addr, port, path := trim(x.Protocol), trim(x.Address), trim(x.Port), trim(x.Path)
	switch {
	case proto == "":
		return store.VideoConnection{}, httpapi.BadRequest(field+".protocol", "required (rtsp, rtmp, srt, udp, http...)")
	case addr == "":
		return store.VideoConnection{}, httpapi.BadRequest(field+".address", "required")
	}
	host := addr
	if port != "" && port != "-1" && port != "0" {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return store.VideoConnection{}, httpapi.BadRequest(field+".port", "must be a port number, not %q", httpapi.ClipValue(port))
		}
		host = net.JoinHostPort(addr, port)
	} else if strings.Contains(addr, ":") && !strings.HasPrefix(addr, "[") {
		host = "[" + addr + "]" // an IPv6 address without a port
	}
	if path != "" && !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	f.URL = proto + "://" + host + path
	if err := checkFeedURL(field+".address", f.URL); err != nil {
		return store.VideoConnection{}, err
	}
	var err error
	if f.RoverPort, err = flexInt(field+".roverPort", trim(x.RoverPort), -1); err != nil {
		return store.VideoConnection{}, err
	}
	if f.IgnoreEmbeddedKLV, err = flexBool(field+".ignoreEmbeddedKLV", trim(x.IgnoreEmbeddedKLV), false); err != nil {
		return store.VideoConnection{}, err
	}
	if f.NetworkTimeout, err = flexInt(field+".timeout", trim(x.Timeout), 0); err != nil {
		return store.VideoConnection{}, err
	}
	if f.BufferTime, err = flexInt(field+".buffer", trim(x.Buffer), -1); err != nil {
		return store.VideoConnection{}, err
	}
	if f.RTSPReliable, err = flexBool(field+".rtspReliable", trim(x.RTSPReliable), false); err != nil {
		return store.VideoConnection{}, err
	}
	c := store.VideoConnection{UID: f.UID, Alias: f.Alias, Active: true, Feeds: []store.VideoFeed{f}}
	if err := c.Validate(); err != nil {
		return c, httpapi.InField(field, err)
	}
	return c, nil
}
