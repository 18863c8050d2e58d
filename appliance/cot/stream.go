package cot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"sync"
)

// Protocol is the format of a streaming connection (protocol.md §4).
type Protocol uint8

const (
	ProtocolXML Protocol = 0 // XML events one after the other (protocol.md §2)
	ProtocolV1  Protocol = 1 // TAK protocol v1 stream frames (protocol.md §3)
)

func (p Protocol) String() string {
	switch p {
	case ProtocolXML:
		return "xml"
	case ProtocolV1:
		return "protobuf-v1"
	}
	return "unknown"
}

// Message is one message read from a stream.
type Message struct {
	Event *Event // the decoded event; nil for an <auth> message. Owns its memory.
	Auth  *Auth  // set for <auth><cot username password uid/></auth>
	Size  int    // bytes the message occupied on the wire, skipped bytes before it included
	// Junk is how many bytes before this message were skipped in
	// protobuf mode while looking for the next frame (protocol.md §3).
	Junk int
}

// Auth is the optional first message of an XML stream (protocol.md §2).
type Auth struct {
	Username, Password, UID string
}

// MaxRelayedEvent is the largest event a TAK client can receive: ATAK's
// receive buffer is 65536 bytes (protocol.md §2). Servers never send more.
const MaxRelayedEvent = 64 << 10

const (
	// DefaultMaxMessage is the inbound message size cap used when none is
	// given: what can be relayed (protocol.md §2). A bigger message can never
	// reach a client, so reading it would only be work for an attacker.
	DefaultMaxMessage = MaxRelayedEvent

	initialBuffer = 4 << 10  // the buffer a decoder takes from the pool when input arrives
	probeSize     = 256      // what an idle decoder waits for input with (blocking reader)
	bigBuffer     = 64 << 10 // a buffer above this is dropped after its message
	maxEmptyReads = 100      // reads returning (0, nil) before giving up
)

// StreamDecoder reads the messages of one streaming connection (ports 8087
// and 8089). It starts in XML (protocol.md §2) and reads TAK protocol v1 frames
// after SetProtocol(ProtocolV1) (protocol.md §3). It buffers what it has read but
// not yet decoded, so switching protocol loses no byte. It is not safe for
// concurrent use.
type StreamDecoder struct {
	r     io.Reader
	max   int
	proto Protocol

	buf        []byte // len(buf) == cap(buf); data is buf[start:end]
	start, end int
	skipped    int   // bytes discarded since the last message (junk, declarations)
	junk       int   // protobuf mode: bytes skipped looking for a frame since the last message
	inMsg      bool  // XML: buf[start:] begins a message
	isAuth     bool  // XML: that message is <auth>
	scan       int   // XML: offset from start where the end-tag search resumes
	readErr    error // error returned by the reader, reported once data runs out
	fatal      error // sticky: ErrTooLarge, a read error or io.EOF
	emptyReads int
	nonblock   bool // the reader returns a would-block error instead of waiting

	// probe receives the first bytes after the buffer ran empty when the
	// reader blocks: an idle connection's reader waits with this, and takes
	// a pooled buffer only when input arrives (thousands of idle clients
	// hold no buffers). Made on first use; a nonblocking decoder has none.
	probe *[probeSize]byte
}

// bufPool holds initialBuffer-sized buffers of decoders waiting for input,
// as array pointers: putting one back allocates nothing.
var bufPool = sync.Pool{New: func() any { return new([initialBuffer]byte) }}

func getBuffer() []byte { return bufPool.Get().(*[initialBuffer]byte)[:] }

// putBuffer returns b to the pool if it is one of the pool's buffers.
func putBuffer(b []byte) {
	if cap(b) != initialBuffer {
		return
	}
	bufPool.Put((*[initialBuffer]byte)(b[:initialBuffer]))
}

// NewStreamDecoder returns a decoder reading from r. A message (with any
// junk skipped before it) longer than maxMessage bytes makes Next fail with
// ErrTooLarge; maxMessage <= 0 means DefaultMaxMessage.
func NewStreamDecoder(r io.Reader, maxMessage int) *StreamDecoder {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	return &StreamDecoder{r: r, max: maxMessage}
}

// SetNonblocking tells the decoder that its reader does not wait for input:
// a Read with nothing ready fails with an error that has a WouldBlock()
// bool method returning true (netx.ErrWouldBlock). Next then returns that
// error, keeps what it has buffered of a message, gives its buffer back
// when it holds nothing, and can be called again once input arrives.
func (d *StreamDecoder) SetNonblocking() { d.nonblock = true }

// wouldBlock reports whether err means "nothing to read now".
func wouldBlock(err error) bool {
	var wb interface{ WouldBlock() bool }
	return errors.As(err, &wb) && wb.WouldBlock()
}

// Protocol returns the format Next currently decodes.
func (d *StreamDecoder) Protocol() Protocol { return d.proto }

// SetProtocol switches the format at the current position: bytes already
// buffered after the last returned message are decoded in the new format
// (protocol.md §4: protobuf starts with the very next byte).
func (d *StreamDecoder) SetProtocol(p Protocol) {
	d.proto = p
	d.inMsg, d.isAuth, d.scan = false, false, 0
}

// Next returns the next message. Errors:
//   - *SyntaxError: one malformed message was skipped; call Next again.
//   - ErrTooLarge: a message exceeds the limit; fatal.
//   - io.EOF at a clean end of stream (only skippable bytes left),
//     io.ErrUnexpectedEOF if the stream ends inside a message, or the
//     reader's own error; all fatal.
//   - a would-block error of a nonblocking reader (SetNonblocking): nothing
//     more to decode until input arrives; not fatal.
func (d *StreamDecoder) Next() (Message, error) {
	for {
		if d.fatal != nil {
			return Message{}, d.fatal
		}
		var (
			msg  Message
			done bool
			err  error
		)
		if d.proto == ProtocolXML {
			msg, done, err = d.nextXML()
		} else {
			msg, done, err = d.nextFrame()
		}
		if errors.Is(err, ErrTooLarge) {
			d.fatal = err
			d.release()
			return Message{}, err
		}
		if done || err != nil {
			d.shrink()
			return msg, err
		}
		if d.readErr != nil && d.nonblock && wouldBlock(d.readErr) {
			err := d.readErr
			d.readErr = nil
			if d.start == d.end {
				d.release() // waiting for input holds no buffer
			}
			return Message{}, err
		}
		if d.readErr != nil {
			d.fatal = d.readErr
			if d.readErr == io.EOF && d.partial() {
				d.fatal = io.ErrUnexpectedEOF
			}
			d.release()
			return Message{}, d.fatal
		}
		d.fill()
	}
}

// partial reports whether the buffered bytes begin a message that the
// stream ended inside of.
func (d *StreamDecoder) partial() bool {
	if d.proto == ProtocolXML {
		return d.inMsg
	}
	return d.end > d.start // junk is discarded eagerly: what is left starts a frame
}

// skip discards n buffered bytes that belong to no message.
func (d *StreamDecoder) skip(n int) error {
	d.start += n
	d.skipped += n
	if d.skipped > d.max {
		return ErrTooLarge
	}
	return nil
}

// take consumes n bytes as one message and returns its wire size and the
// junk skipped before it.
func (d *StreamDecoder) take(n int) (size, junk int) {
	size, junk = d.skipped+n, d.junk
	d.start += n
	d.skipped, d.junk = 0, 0
	return size, junk
}

var (
	tagEvent    = []byte("<event")
	tagAuth     = []byte("<auth")
	endTagEvent = []byte("</event")
	endTagAuth  = []byte("</auth")
)

// nextXML cuts one XML message from the buffer (protocol.md §2): it starts at the
// next "<event" (or "<auth") and ends after the literal "</event>" (or
// "</auth>"). done is false when more input is needed.
func (d *StreamDecoder) nextXML() (Message, bool, error) {
	for !d.inMsg {
		b := d.buf[d.start:d.end]
		i := bytes.IndexByte(b, '<')
		if i < 0 {
			return Message{}, false, d.skip(len(b))
		}
		if err := d.skip(i); err != nil {
			return Message{}, false, err
		}
		b = b[i:]
		switch {
		case startsTag(b, tagEvent):
			d.inMsg, d.isAuth, d.scan = true, false, len(tagEvent)
		case startsTag(b, tagAuth):
			d.inMsg, d.isAuth, d.scan = true, true, len(tagAuth)
		case len(b) <= len(tagEvent) && (bytes.HasPrefix(tagEvent, b) || bytes.HasPrefix(tagAuth, b)):
			return Message{}, false, nil // too short to tell yet
		default:
			if err := d.skip(1); err != nil {
				return Message{}, false, err
			}
		}
	}
	return d.cutXML()
}

// cutXML finds the end of the XML message that starts at d.start (d.inMsg
// is set) and decodes it; done is false when more input is needed.
func (d *StreamDecoder) cutXML() (Message, bool, error) {
	endTag := endTagEvent
	if d.isAuth {
		endTag = endTagAuth
	}
	b := d.buf[d.start:d.end]
	for {
		j := bytes.Index(b[d.scan:], endTag)
		if j < 0 {
			d.scan = max(d.scan, len(b)-len(endTag)+1)
			break
		}
		k := d.scan + j + len(endTag)
		for k < len(b) && isSpace(b[k]) {
			k++
		}
		if k == len(b) {
			d.scan += j // wait for the rest of the end tag
			break
		}
		if b[k] != '>' {
			d.scan += j + 1 // "</events" or the like: not the end
			continue
		}
		n := k + 1
		if d.skipped+n > d.max {
			return Message{}, false, ErrTooLarge
		}
		msgBytes := b[:n]
		isAuth := d.isAuth
		d.inMsg, d.isAuth, d.scan = false, false, 0
		size, junk := d.take(n)
		if isAuth {
			a, err := parseAuth(msgBytes)
			return Message{Auth: a, Size: size, Junk: junk}, true, err
		}
		ev, err := Decode(msgBytes)
		return Message{Event: ev, Size: size, Junk: junk}, true, err
	}
	if d.skipped+len(b) > d.max {
		return Message{}, false, ErrTooLarge
	}
	return Message{}, false, nil
}

// startsTag reports whether b begins with tag followed by a byte that ends
// an element name.
func startsTag(b, tag []byte) bool {
	if len(b) <= len(tag) || !bytes.HasPrefix(b, tag) {
		return false
	}
	c := b[len(tag)]
	return isSpace(c) || c == '>' || c == '/'
}

// nextFrame cuts one TAK protocol v1 stream frame (protocol.md §3): 0xBF, uvarint
// length, TakMessage. Bytes other than 0xBF where a frame should start are
// skipped up to the next 0xBF; a length over MaxProtoFrame marks that 0xBF
// as corrupt (it is skipped and the reader resynchronizes); messages
// without a cotEvent are consumed silently.
func (d *StreamDecoder) nextFrame() (Message, bool, error) {
	for {
		b := d.buf[d.start:d.end]
		if len(b) == 0 {
			return Message{}, false, nil
		}
		if d.inMsg || b[0] == '<' {
			// An XML event between frames: a client that sends one right
			// after its t-x-takp-q, racing the switch (protocol.md §4).
			if msg, done, err, isXML := d.xmlBetweenFrames(); isXML {
				return msg, done, err
			}
			// A declaration may have been skipped: look again.
			if b = d.buf[d.start:d.end]; len(b) == 0 {
				return Message{}, false, nil
			}
		}
		if b[0] != frameMagic {
			// Skip to the next byte that may start a frame or an XML event.
			i := 1
			for i < len(b) && b[i] != frameMagic && b[i] != '<' {
				i++
			}
			d.junk += i
			if err := d.skip(i); err != nil {
				return Message{}, false, err
			}
			continue
		}
		l, n := binary.Uvarint(b[1:])
		if n == 0 {
			return Message{}, false, nil // length not complete yet
		}
		if n < 0 || l > MaxProtoFrame {
			d.junk++
			if err := d.skip(1); err != nil {
				return Message{}, false, err
			}
			continue
		}
		total := 1 + n + int(l)
		if d.skipped+total > d.max {
			return Message{}, false, ErrTooLarge
		}
		if len(b) < total {
			return Message{}, false, nil
		}
		payload := b[1+n : total]
		size, junk := d.take(total)
		ev, err := DecodeProto(payload)
		if errors.Is(err, ErrNoEvent) {
			// A pure takControl message: consumed, counted with the next.
			d.skipped, d.junk = size, junk
			continue
		}
		return Message{Event: ev, Size: size, Junk: junk}, true, err
	}
}

var xmlDecl = []byte("<?xml")

// xmlBetweenFrames decodes an XML event found where a protobuf frame should
// start. isXML is false when the bytes at d.start do not begin one (the
// caller skips them as junk); done is false when more input is needed to
// tell or to finish the event. A declaration before the event is skipped.
func (d *StreamDecoder) xmlBetweenFrames() (msg Message, done bool, err error, isXML bool) {
	for !d.inMsg {
		b := d.buf[d.start:d.end]
		switch {
		case startsTag(b, tagEvent):
			d.inMsg, d.isAuth, d.scan = true, false, len(tagEvent)
		case bytes.HasPrefix(b, xmlDecl):
			end := bytes.Index(b, []byte("?>"))
			if end < 0 {
				if len(b) > maxDeclaration {
					return Message{}, false, nil, false
				}
				return Message{}, false, nil, true // wait for the rest of it
			}
			n := end + 2
			for n < len(b) && isSpace(b[n]) {
				n++
			}
			if err := d.skip(n); err != nil {
				return Message{}, false, err, true
			}
			if n == len(b) {
				return Message{}, false, nil, true
			}
		case len(b) <= len(tagEvent) && (bytes.HasPrefix(tagEvent, b) || bytes.HasPrefix(xmlDecl, b)):
			return Message{}, false, nil, true // too short to tell yet
		default:
			return Message{}, false, nil, false
		}
	}
	msg, done, err = d.cutXML()
	return msg, done, err, true
}

// maxDeclaration bounds an XML declaration looked for between frames.
const maxDeclaration = 256

// fill reads more input into the buffer, making room first. With nothing
// buffered, a blocking reader's decoder gives the buffer back and waits with
// the probe; a nonblocking one reads into a pooled buffer, which Next gives
// back if nothing came.
func (d *StreamDecoder) fill() {
	if d.start == d.end && d.nonblock {
		d.start, d.end = 0, 0
		if d.buf == nil {
			d.buf = getBuffer()
		}
	} else if d.start == d.end {
		d.start, d.end = 0, 0
		putBuffer(d.buf)
		d.buf = nil
		if d.probe == nil {
			d.probe = new([probeSize]byte)
		}
		n, err := d.r.Read(d.probe[:])
		if n < 0 || n > len(d.probe) {
			err, n = errors.New("cot: reader returned an invalid count"), 0
		}
		if n > 0 {
			d.buf = getBuffer()
			d.end = copy(d.buf, d.probe[:n])
		}
		d.noteRead(n, err)
		return
	}
	if d.end == len(d.buf) {
		if d.start > 0 {
			d.end = copy(d.buf, d.buf[d.start:d.end])
			d.start = 0
		} else {
			grown := make([]byte, min(2*len(d.buf), d.max+MaxProtoFrame+16))
			if len(grown) <= len(d.buf) {
				grown = make([]byte, len(d.buf)+initialBuffer)
			}
			d.end = copy(grown, d.buf[d.start:d.end])
			putBuffer(d.buf)
			d.start, d.buf = 0, grown
		}
	}
	n, err := d.r.Read(d.buf[d.end:])
	if n < 0 || n > len(d.buf)-d.end {
		err, n = errors.New("cot: reader returned an invalid count"), 0
	}
	d.end += n
	d.noteRead(n, err)
}

// noteRead records a read's error, and reads that bring nothing.
func (d *StreamDecoder) noteRead(n int, err error) {
	switch {
	case err != nil:
		d.readErr = err
	case n == 0:
		d.emptyReads++
		if d.emptyReads >= maxEmptyReads {
			d.readErr = io.ErrNoProgress
		}
	default:
		d.emptyReads = 0
	}
}

// shrink drops a big buffer once the message that needed it is done.
func (d *StreamDecoder) shrink() {
	if len(d.buf) <= bigBuffer || d.end-d.start > initialBuffer {
		return
	}
	small := getBuffer()
	d.end = copy(small, d.buf[d.start:d.end])
	d.start, d.buf = 0, small
}

// release gives the buffer back once the decoder has failed for good.
func (d *StreamDecoder) release() {
	putBuffer(d.buf)
	d.buf, d.start, d.end = nil, 0, 0
}

// parseAuth reads <auth><cot username password uid/></auth> (protocol.md §2).
func parseAuth(b []byte) (*Auth, error) {
	t := newTokenizer(b)
	defer t.release()
	var a *Auth
	for {
		if err := t.next(); err != nil {
			return nil, err
		}
		switch t.kind {
		case tokEOF:
			if a == nil {
				return nil, errAt(0, "<auth> without <cot>")
			}
			return a, nil
		case tokStart:
			if t.depth == 0 && !t.is(t.name, "auth") {
				return nil, errAt(t.start, "expected <auth>")
			}
			if t.depth == 1 && a == nil && t.is(t.name, "cot") {
				a = new(Auth)
				for _, at := range t.attrs {
					switch string(t.bytes(at.name)) {
					case "username":
						a.Username = t.str(at)
					case "password":
						a.Password = t.str(at)
					case "uid":
						a.UID = t.str(at)
					}
				}
			}
		}
	}
}
