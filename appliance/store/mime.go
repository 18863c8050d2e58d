package store

// MIME detection of data packages (api.md §2.8: "have their MIME type
// detected"), from content, not from the name or the client's word.
//
// github.com/gabriel-vasile/mimetype rather than http.DetectContentType: the
// standard library sniffs the WHATWG list, which calls every ZIP container
// "application/zip" and has no KML/KMZ, DOCX/XLSX or GPX; data packages are
// mostly exactly those (mission packages, KMZ overlays, office documents).
// mimetype reads the ZIP entries inside the first bytes and tells them apart.

import (
	"bufio"
	"io"

	"github.com/gabriel-vasile/mimetype"
)

// MIMESniffLen is how many leading bytes DetectMIME looks at (mimetype's
// default read limit).
const MIMESniffLen = 3072

// DetectMIME names the type of content starting with head (at most
// MIMESniffLen bytes are looked at); unknown binary content is
// "application/octet-stream".
func DetectMIME(head []byte) string {
	if len(head) > MIMESniffLen {
		head = head[:MIMESniffLen]
	}
	return mimetype.Detect(head).String()
}

// sniffMIME peeks at the start of r and returns its type and a reader that
// still yields every byte. Only a failing read is an error (a short file is
// not).
func sniffMIME(r io.Reader) (string, io.Reader, error) {
	br := bufio.NewReaderSize(r, MIMESniffLen)
	head, err := br.Peek(MIMESniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return "", nil, err
	}
	return DetectMIME(head), br, nil
}
