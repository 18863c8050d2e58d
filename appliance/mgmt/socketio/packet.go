package socketio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Engine.IO v4 packet types (the first byte of every websocket text
// message).
const (
	eioOpen    = '0'
	eioClose   = '1'
	eioPing    = '2'
	eioPong    = '3'
	eioMessage = '4'
	eioUpgrade = '5'
	eioNoop    = '6'
)

// Socket.IO v5 packet types (the byte after an Engine.IO message's '4').
const (
	sioConnect      = '0'
	sioDisconnect   = '1'
	sioEvent        = '2'
	sioAck          = '3'
	sioConnectError = '4'
	sioBinaryEvent  = '5'
	sioBinaryAck    = '6'
)

// Limits of the packet grammar: a namespace name and an acknowledgement id
// longer than these are refused (an id stays below 2^53, JavaScript's
// largest exact integer).
const (
	maxNamespace = 128
	maxAckDigits = 15
)

// reserved are the event names a client may not send (the Socket.IO
// reference parser refuses them too).
var reserved = map[string]bool{
	"connect": true, "connect_error": true, "disconnect": true,
	"disconnecting": true, "newListener": true, "removeListener": true,
}

// errBinary marks a binary event or acknowledgement, which is not served.
var errBinary = errors.New("binary attachments are not supported")

// packet is one decoded Socket.IO packet.
type packet struct {
	typ  byte
	nsp  string // "/" unless the packet named one
	id   int64  // acknowledgement id; -1 when absent
	data []byte // JSON payload; nil when absent
	// For events: the name and the arguments after it.
	name string
	args []json.RawMessage
}

// parsePacket decodes a Socket.IO packet (an Engine.IO message payload,
// without its leading '4') and checks that its payload suits its type.
func parsePacket(b []byte) (packet, error) {
	p := packet{nsp: "/", id: -1}
	if len(b) == 0 {
		return p, errors.New("empty packet")
	}
	p.typ = b[0]
	switch p.typ {
	case sioConnect, sioDisconnect, sioEvent, sioAck:
	case sioBinaryEvent, sioBinaryAck:
		return p, errBinary
	case sioConnectError:
		return p, errors.New("connect error packet from a client")
	default:
		return p, fmt.Errorf("unknown packet type %q", p.typ)
	}
	i := 1
	if i < len(b) && b[i] == '/' {
		end := bytes.IndexByte(b[i:], ',')
		if end < 0 {
			end = len(b) - i
		}
		if end > maxNamespace {
			return p, errors.New("namespace too long")
		}
		p.nsp = string(b[i : i+end])
		i += end
		if i < len(b) {
			i++ // the comma
		}
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i > start {
		if i-start > maxAckDigits {
			return p, errors.New("acknowledgement id too long")
		}
		p.id, _ = strconv.ParseInt(string(b[start:i]), 10, 64)
	}
	if i < len(b) {
		p.data = b[i:]
	}
	return p, p.checkPayload()
}

// checkPayload applies the payload rule of the packet's type.
func (p *packet) checkPayload() error {
	switch p.typ {
	case sioConnect:
		if p.data != nil && !isObject(p.data) {
			return errors.New("connect payload is not a JSON object")
		}
	case sioDisconnect:
		if p.data != nil {
			return errors.New("disconnect packet with a payload")
		}
	case sioAck:
		if p.id < 0 {
			return errors.New("acknowledgement without an id")
		}
		if err := json.Unmarshal(p.data, &p.args); err != nil || p.data == nil || p.args == nil {
			return errors.New("acknowledgement payload is not a JSON array")
		}
	case sioEvent:
		if err := json.Unmarshal(p.data, &p.args); err != nil || p.data == nil || len(p.args) == 0 {
			return errors.New("event payload is not a non-empty JSON array")
		}
		first := p.args[0]
		p.args = p.args[1:]
		if err := json.Unmarshal(first, &p.name); err != nil {
			// The reference client also allows a number as the name.
			var n json.Number
			if json.Unmarshal(first, &n) != nil {
				return errors.New("event name is not a string")
			}
			p.name = n.String()
		} else if reserved[p.name] {
			return fmt.Errorf("reserved event name %q", p.name)
		}
	}
	return nil
}

// isObject reports whether b is one valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// encodeEvent is the Engine.IO message carrying an event, with an
// acknowledgement id when id >= 0.
func encodeEvent(id int64, name string, args []any) ([]byte, error) {
	return encodeArray(sioEvent, id, append([]any{name}, args...))
}

// encodeAck is the Engine.IO message acknowledging id with args.
func encodeAck(id int64, args []any) ([]byte, error) {
	if args == nil {
		args = []any{}
	}
	return encodeArray(sioAck, id, args)
}

func encodeArray(typ byte, id int64, arr []any) ([]byte, error) {
	j, err := json.Marshal(arr)
	if err != nil {
		return nil, fmt.Errorf("socketio: encoding the arguments: %w", err)
	}
	out := make([]byte, 0, len(j)+20)
	out = append(out, eioMessage, typ)
	if id >= 0 {
		out = strconv.AppendInt(out, id, 10)
	}
	return append(out, j...), nil
}

// encodeControl is an Engine.IO message carrying a Socket.IO packet with
// an optional namespace and JSON object payload (connect, connect error,
// disconnect).
func encodeControl(typ byte, nsp string, payload any) []byte {
	out := []byte{eioMessage, typ}
	if nsp != "/" && nsp != "" {
		out = append(append(out, nsp...), ',')
	}
	if payload != nil {
		j, _ := json.Marshal(payload) // maps of strings only
		out = append(out, j...)
	}
	return out
}
