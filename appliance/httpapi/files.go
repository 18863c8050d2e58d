package httpapi

// File uploads and downloads shared by the management API's data packages
// and the client API's enterprise sync: the file part of a multipart body,
// read as a stream, and a download with Range support. Neither ever holds a
// whole file in memory.

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/diskspace"
	"outpost/appliance/fault"
	"outpost/appliance/logx"
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

// Upload is what every route that takes a file shares (the management API's
// data packages, the client API's enterprise sync and mission uploads): the
// bound on the body, the disk reserve, reading the file part, and the answer
// to each way an upload fails. Nothing is stored by an upload that fails,
// whichever way.
type Upload struct {
	What     string           // what is uploaded, in log lines: "data package", "enterprise sync"
	Name     string           // the file's name as the client gave it (logged clipped)
	MaxBytes int64            // the largest file accepted (maxUploadBytes)
	Space    *diskspace.Gauge // the data filesystem's reserve (nil: none)
	Internal string           // the route's 500 text (api.md §7)
}

// Begin refuses a body announced larger than the limit (413), any upload
// while free disk space is below the reserve (507), and one whose announced
// length alone would take it below (413); it bounds the rest of the body and
// reads it through the reserve, so an upload that crosses it mid-stream is
// cut (507, nothing stored). False means it was answered.
func (u Upload) Begin(w http.ResponseWriter, r *http.Request) bool {
	if r.ContentLength > u.MaxBytes+MultipartSlack {
		u.tooLarge(w, r, r.ContentLength)
		return false
	}
	if err := u.Space.CheckUpload(r.ContentLength); err != nil {
		u.Failed(w, r, err)
		return false
	}
	r.Body = u.Space.Body(http.MaxBytesReader(w, r.Body, u.MaxBytes+MultipartSlack))
	return true
}

// File returns the multipart part field, or answers why there is none.
func (u Upload) File(w http.ResponseWriter, r *http.Request, field string) (*multipart.Part, bool) {
	part, err := FilePart(r, field)
	var he *Error
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return part, true
	case errors.As(err, &he), errors.As(err, &mbe), fault.KindOf(err) != fault.Internal:
		u.Failed(w, r, err)
	default:
		// Anything else went wrong reading the body before the file.
		u.readFailed(w, r, err)
	}
	return nil, false
}

// Failed answers an upload that could not be read or stored: too large
// (413, the connection closed), a broken or abandoned body (400, or nothing
// when the client went away), no room on the disk (507 or, for an announced
// length, 413, the connection closed), a refusal of the store (its kind,
// Fail), or a fault of ours (500).
func (u Upload) Failed(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	var he *Error
	switch {
	case errors.As(err, &he):
		Fail(w, r, err, u.Internal)
	case errors.Is(err, diskspace.ErrNoSpace) || errors.Is(err, diskspace.ErrWouldCross):
		loggerOf(r).Info(u.What+" upload refused: not enough free disk space; nothing stored", "name", logx.Clip(u.Name),
			"remote", ClientAddr(r).String(), "content_length", r.ContentLength, "reason", fault.Detail(err))
		w.Header().Set("Connection", "close") // the rest of the body is not read
		Fail(w, r, err, u.Internal)
	case errors.As(err, &mbe) || fault.KindOf(err) == fault.TooLarge:
		u.tooLarge(w, r, -1)
	case fault.KindOf(err) != fault.Internal:
		loggerOf(r).Info(u.What+" upload refused; nothing stored", "name", logx.Clip(u.Name), "remote", ClientAddr(r).String(),
			"reason", fault.Detail(err))
		Fail(w, r, err, u.Internal)
	case r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled):
		u.readFailed(w, r, err)
	default:
		Fail(w, r, err, u.Internal)
	}
}

// readFailed answers an upload whose body could not be read: the client went
// away (nothing to answer) or sent a broken body.
func (u Upload) readFailed(w http.ResponseWriter, r *http.Request, err error) {
	loggerOf(r).Info(u.What+" upload abandoned; nothing stored", "name", logx.Clip(u.Name),
		"remote", ClientAddr(r).String(), "reason", logx.Clip(err.Error()))
	if r.Context().Err() == nil {
		WriteMessage(w, http.StatusBadRequest, "assetfile: the upload ended early or is malformed; nothing was stored")
	}
}

func (u Upload) tooLarge(w http.ResponseWriter, r *http.Request, size int64) {
	loggerOf(r).Warn(u.What+" upload refused: too large", "name", logx.Clip(u.Name), "remote", ClientAddr(r).String(),
		"content_length", size, "max_upload_bytes", u.MaxBytes)
	w.Header().Set("Connection", "close")
	WriteMessage(w, http.StatusRequestEntityTooLarge,
		"assetfile: larger than the "+strconv.FormatInt(u.MaxBytes, 10)+" bytes this server accepts (maxUploadBytes); nothing was stored")
}
