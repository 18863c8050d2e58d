package cot

import "time"

// Event is one CoT event. After it has been decoded or built and handed to
// the broker it is shared between goroutines and must be treated as
// read-only; functions that change an event return a modified copy.
type Event struct {
	Version string // "2.0"
	UID     string
	Type    string
	How     string

	Time  time.Time
	Start time.Time
	Stale time.Time

	// Optional header attributes; empty when absent.
	Access       string
	QoS          string
	Opex         string
	Caveat       string
	ReleasableTo string

	Point  Point
	Detail Detail
}

// Point is the event's <point>. Unknown values are 9999999 (protocol.md §1).
type Point struct {
	Lat, Lon, Hae, Ce, Le float64
}

// Unknown is the CoT value for an unknown hae, ce or le.
const Unknown = 9999999.0

// Detail is the event's <detail>: the children verbatim, plus typed views of
// the children the server itself needs. The typed views are read from XML
// when an event is decoded; they are never the source of truth for encoding
// XML (XML is). Nil or empty means the child is absent.
type Detail struct {
	// XML holds the children of <detail> exactly as they should be relayed,
	// without the <detail> wrapper and without a declaration. It is always
	// well-formed XML content (a sequence of elements, text and comments).
	XML []byte

	Contact           *Contact
	Group             *Group
	Takv              *Takv
	Track             *Track
	Status            *Status
	PrecisionLocation *PrecisionLocation
	Marti             *Marti
	Links             []Link
	Emergency         *Emergency
	TakControl        *TakControl
}

// Contact is <contact callsign endpoint/>.
type Contact struct {
	Callsign string
	Endpoint string
}

// Group is <__group name role/>: team colour and role, display metadata only.
type Group struct {
	Name string
	Role string
}

// Takv is <takv device platform os version/>.
type Takv struct {
	Device, Platform, OS, Version string
}

// Track is <track speed course/>.
type Track struct {
	Speed, Course float64
}

// Status is <status battery/>.
type Status struct {
	Battery uint32
}

// PrecisionLocation is <precisionlocation geopointsrc altsrc/>.
type PrecisionLocation struct {
	GeoPointSrc, AltSrc string
}

// Marti is <marti> with its <dest> children (protocol.md §6).
type Marti struct {
	Dests []Dest
}

// Dest is one <dest/>; exactly one field is normally set.
type Dest struct {
	Callsign string
	UID      string
	Mission  string
}

// Link is a <link uid type relation/> child of detail.
type Link struct {
	UID, Type, Relation string
}

// Emergency is <emergency type cancel>text</emergency>.
type Emergency struct {
	Type   string
	Cancel bool
	Text   string
}

// TakControl is the <TakControl> child used by protocol negotiation (protocol.md §4).
// Zero values mean "not present".
type TakControl struct {
	SupportVersion int   // <TakProtocolSupport version=N/>
	RequestVersion int   // <TakRequest version=N/>
	Response       *bool // <TakResponse status="true|false"/>
}
