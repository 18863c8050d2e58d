package broker

import "strings"

// Class is a coarse kind of event, by CoT type, for the counters (events
// in and out by class; /metrics).
type Class uint8

// The classes, from the type's leading atoms (protocol.md §1).
const (
	ClassPosition Class = iota // a-* with a contact: a client's position report
	ClassMarker                // other a-*: markers, points, units
	ClassChat                  // b-t-f*: GeoChat and its receipts
	ClassAlert                 // b-a-*: emergencies and their cancels
	ClassFile                  // b-f-*: file shares
	ClassDrawing               // u-*: shapes, routes, ranges
	ClassDelete                // t-x-d-d: deletes and departures
	ClassOther                 // everything else
	numClasses
)

var classLabels = [numClasses]string{"position", "marker", "chat", "alert", "file", "drawing", "delete", "other"}

// Label is the class as a metric label value.
func (c Class) Label() string {
	if c < numClasses {
		return classLabels[c]
	}
	return "other"
}

// Classes lists every class, in order.
func Classes() []Class {
	out := make([]Class, numClasses)
	for i := range out {
		out[i] = Class(i)
	}
	return out
}

// classOf classifies an event type; sa says it is a position report.
func classOf(typ string, sa bool) Class {
	switch {
	case sa:
		return ClassPosition
	case strings.HasPrefix(typ, "a-"):
		return ClassMarker
	case strings.HasPrefix(typ, "b-t-f"):
		return ClassChat
	case strings.HasPrefix(typ, "b-a-"), typ == "b-a":
		return ClassAlert
	case strings.HasPrefix(typ, "b-f-"):
		return ClassFile
	case strings.HasPrefix(typ, "u-"):
		return ClassDrawing
	case typ == "t-x-d-d":
		return ClassDelete
	default:
		return ClassOther
	}
}
