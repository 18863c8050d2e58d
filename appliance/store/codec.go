package store

// The one place the store touches the CoT codecs: history rows keep each
// event's XML encoding (the relay's own wire form, protocol.md §2) and decode it
// back on demand.

import "outpost/appliance/cot"

// encodeEventXML appends ev's XML encoding to dst.
func encodeEventXML(dst []byte, ev *cot.Event) []byte { return ev.AppendXML(dst) }

// decodeEventXML parses a stored event.
func decodeEventXML(b []byte) (*cot.Event, error) { return cot.Decode(b) }
