package httpapi

// File uploads and downloads shared by the management API's data packages
// and the client API's enterprise sync: the file part of a multipart body,
// read as a stream, and a download with Range support. Neither ever holds a
// whole file in memory.

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// MultipartSlack is what a multipart body may carry besides its file: part
// headers, boundaries and small form fields.
const MultipartSlack = 64 << 10

// maxOtherParts bounds the parts skipped before the file's part.
const maxOtherParts = 16

// IsMultipart reports whether the request body is multipart/form-data.
func IsMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// FilePart returns the part named field of a multipart/form-data body, to be
// read as a stream: the parts before it (at most 16) are skipped unread,
// nothing is buffered. A body that is not multipart, is malformed before the
// part, or lacks it is a 400 *Error naming field. An error reading the body
// itself (the client went away, an *http.MaxBytesError) is returned as is,
// for the caller to tell a refusal from an abandoned upload.
func FilePart(r *http.Request, field string) (*multipart.Part, error) {
	if !IsMultipart(r) {
		return nil, BadRequest(field, "the body must be multipart/form-data with the file in a field named %s", field)
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, BadRequest(field, "malformed multipart body: %v", err)
	}
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, BadRequest(field, "required: no file field named %s in the body", field)
		}
		if err != nil {
			return nil, err
		}
		if part.FormName() == field {
			return part, nil
		}
		if parts >= maxOtherParts {
			return nil, BadRequest(field, "not among the first %d parts of the body", maxOtherParts)
		}
		// NextPart skips the rest of this part.
	}
}

// Download is a file answered by ServeDownload.
type Download struct {
	Name     string    // the file name clients save it under
	MIMEType string    // "" is application/octet-stream
	Hash     string    // the content's SHA-256 (hex): its entity tag
	ModTime  time.Time // Last-Modified
	Content  io.ReadSeeker
}

// ServeDownload answers GET and HEAD with the content as an attachment under
// its name. Range requests get 206 (416 when unsatisfiable), conditional
// requests are answered from the hash as entity tag, and the content is read
// as it is sent, never whole.
func ServeDownload(w http.ResponseWriter, r *http.Request, d Download) {
	ct := d.MIMEType
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", Attachment(d.Name))
	if d.Hash != "" {
		w.Header().Set("ETag", `"`+strings.ToLower(d.Hash)+`"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "", d.ModTime, d.Content)
}

// Attachment is a Content-Disposition value offering the file under name
// (RFC 6266; non-ASCII names are encoded per RFC 2231).
func Attachment(name string) string {
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": name}); cd != "" {
		return cd
	}
	return "attachment"
}
