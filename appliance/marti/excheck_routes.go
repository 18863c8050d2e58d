package marti

// ExCheck checklists (api.md §4.3, §2.14): templates and their tasks,
// checklists started from templates (each with a mission of the same name,
// tool ExCheck, that clients subscribe to), task updates announced with
// ChecklistUpdateNotification, and a checklist linked into a mission as
// external data. Documents are read and edited by appliance/excheck in
// either style (the contract's attributes, ATAK's elements), keeping every
// element; what a client uploaded is stored as sent when the server had
// nothing to add to it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/excheck"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

func (h *Handler) excheckRoutes(rt *access.Routes) {
	m := clientRoutes{rt}
	const p = "/Marti/api/excheck"
	m.Handle("POST "+p+"/template", h.mission(h.templateCreate))
	m.Handle("GET "+p+"/template/{templateUid}", h.mission(h.templateGet))
	m.Handle("GET "+p+"/template/{templateUid}/task/{taskUid}", h.mission(h.templateTaskGet))
	m.Handle("POST "+p+"/template/{templateUid}/task/{taskUid}", h.mission(h.templateTaskPut))
	m.Handle("PUT "+p+"/template/{templateUid}/task/{taskUid}", h.mission(h.templateTaskPut))
	m.Handle("DELETE "+p+"/template/{templateUid}/task/{taskUid}", h.mission(h.templateTaskDelete))
	m.Handle("POST "+p+"/{subscription}/start", h.mission(h.checklistStart))
	m.Handle("GET "+p+"/checklist/active", h.mission(h.checklistsActive))
	m.Handle("GET "+p+"/checklist/{checklistid}", h.mission(h.checklistGet))
	m.Handle("GET "+p+"/checklist/{checklistid}/task/{taskid}", h.mission(h.checklistTaskGet))
	m.Handle("PUT "+p+"/checklist/{checklistid}/task/{taskid}", h.mission(h.checklistTaskPut))
	m.Handle("PUT "+p+"/checklist/{checklistid}/mission/{mission_id}", h.mission(h.checklistToMission))
}

const xmlType = "application/xml"

// readXML reads an XML body of at most one ExCheck document (413 above).
func readXML(r *http.Request, field string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, excheck.MaxDocumentBytes+1))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe) || len(b) > excheck.MaxDocumentBytes:
		return nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, "%s: larger than %d bytes", field, excheck.MaxDocumentBytes)
	case err != nil:
		return nil, httpapi.BadRequest(field, "the body could not be read")
	case len(bytes.TrimSpace(b)) == 0:
		return nil, httpapi.BadRequest(field, "required (an XML document in the body)")
	}
	return b, nil
}

// xmlError is the failure of reading an ExCheck document: a refused
// document is a 400 saying what is wrong; the rest fails as for missions.
func xmlError(field string, err error) error {
	if errors.Is(err, excheck.ErrInvalid) {
		return httpapi.Errorf(http.StatusBadRequest, "%s: %s", field, err)
	}
	return err
}

// pathUID reads and checks a uid path value.
func pathUID(r *http.Request, key string) (string, error) {
	v := r.PathValue(key)
	if err := excheck.CheckUID(key, v); err != nil {
		return "", httpapi.BadRequest("", "%s", err.Error())
	}
	return v, nil
}

// pathUIDs reads and checks a document's and a task's uid path values.
func pathUIDs(r *http.Request, docKey, taskKey string) (doc, task string, err error) {
	if doc, err = pathUID(r, docKey); err == nil {
		task, err = pathUID(r, taskKey)
	}
	return doc, task, err
}

// kept is what to store for a parsed document: the bytes as sent when the
// parser added nothing to them, else the document as written back.
func kept(raw []byte, d *excheck.Doc) []byte {
	if root, err := excheck.Parse(raw); err == nil && bytes.Equal(excheck.Document(root), d.Bytes()) {
		return raw
	}
	return d.Bytes()
}

// templateCreate answers POST /Marti/api/excheck/template with "done".
// The template becomes content of the exchecktemplates mission, whose
// subscribers hear of it (the list ATAK's ExCheck tool reads).
func (h *Handler) templateCreate(w http.ResponseWriter, r *http.Request) error {
	who, err := h.actor(r)
	if err != nil {
		return err
	}
	raw, err := readXML(r, "templatedata")
	if err != nil {
		return err
	}
	d, err := excheck.ParseTemplate(raw)
	if err != nil {
		return xmlError("templatedata", err)
	}
	// A template a client sends is shared with its IN groups; one it
	// replaces must be one it sees (access.md "Groups").
	if old, err := h.opts.Checklists.Template(r.Context(), d.UID()); err == nil && !access.From(r).Sees(old.Groups) {
		return fmt.Errorf("%w: the template uid %q is taken", store.ErrConflict, d.UID())
	}
	m, cr, err := h.opts.Checklists.PutTemplate(r.Context(), store.ExCheckDoc{UID: d.UID(), Name: d.Name(), Description: d.Description(),
		CreatorUID: who, XML: kept(raw, d), Groups: access.From(r).In})
	if err != nil {
		return err
	}
	h.log.Info("checklist template stored", "template_uid", d.UID(), "name", logx.Clip(d.Name()), "creator_uid", logx.Clip(who))
	h.notifyContents(m, who, []store.ContentChange{{Content: &cr}})
	httpapi.WriteText(w, http.StatusOK, "done")
	return nil
}

func (h *Handler) templateGet(w http.ResponseWriter, r *http.Request) error {
	return h.docGet(w, r, store.TemplateDoc, "templateUid")
}

// docGet answers with a stored template or checklist, as kept.
func (h *Handler) docGet(w http.ResponseWriter, r *http.Request, kind store.DocKind, key string) error {
	uid, err := pathUID(r, key)
	if err != nil {
		return err
	}
	doc, err := h.getDoc(r, kind, uid)
	if err != nil {
		return err
	}
	httpapi.WriteBody(w, http.StatusOK, xmlType, doc.XML)
	return nil
}

// getDoc reads a stored checklist or template the caller's groups see
// (another is answered as a missing one).
func (h *Handler) getDoc(r *http.Request, kind store.DocKind, uid string) (store.ExCheckDoc, error) {
	var (
		d   store.ExCheckDoc
		err error
	)
	if kind == store.ChecklistDoc {
		d, err = h.opts.Checklists.Checklist(r.Context(), uid)
	} else {
		d, err = h.opts.Checklists.Template(r.Context(), uid)
	}
	if err == nil && !access.From(r).Sees(d.Groups) {
		return store.ExCheckDoc{}, fmt.Errorf("%w: no %s %q", store.ErrNotFound, kind, uid)
	}
	return d, err
}

// docTask finds a task of a stored document (404 when absent).
func docTask(raw []byte, kind store.DocKind, uid, taskUID string) (*excheck.Doc, *excheck.Node, error) {
	parse := excheck.ParseTemplate
	if kind == store.ChecklistDoc {
		parse = excheck.ParseChecklist
	}
	d, err := parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("stored document %s: %w", uid, err)
	}
	t := d.Task(taskUID)
	if t == nil {
		return d, nil, fmt.Errorf("%w: %q has no task %q", store.ErrNotFound, uid, taskUID)
	}
	return d, t, nil
}

func (h *Handler) templateTaskGet(w http.ResponseWriter, r *http.Request) error {
	return h.taskGet(w, r, store.TemplateDoc, "templateUid", "taskUid")
}

func (h *Handler) checklistTaskGet(w http.ResponseWriter, r *http.Request) error {
	return h.taskGet(w, r, store.ChecklistDoc, "checklistid", "taskid")
}

func (h *Handler) taskGet(w http.ResponseWriter, r *http.Request, kind store.DocKind, docKey, taskKey string) error {
	uid, taskUID, err := pathUIDs(r, docKey, taskKey)
	if err != nil {
		return err
	}
	doc, err := h.getDoc(r, kind, uid)
	if err != nil {
		return err
	}
	_, t, err := docTask(doc.XML, kind, uid, taskUID)
	if err != nil {
		return err
	}
	httpapi.WriteBody(w, http.StatusOK, xmlType, excheck.Document(t))
	return nil
}

// readTask reads a task body and gives it the path's uid.
func readTask(r *http.Request, field, taskUID string) (*excheck.Node, error) {
	raw, err := readXML(r, field)
	if err != nil {
		return nil, err
	}
	t, err := excheck.ParseTask(raw)
	if err != nil {
		return nil, err
	}
	excheck.SetTaskUID(t, taskUID)
	return t, nil
}

// fitTask writes a task's uid in the document's style: the contract's
// documents carry it as an attribute, ATAK's as an element.
func fitTask(d *excheck.Doc, t *excheck.Node, uid string) {
	if !d.AttrStyle() {
		return
	}
	if el := t.Child("uid"); el != nil {
		t.Remove(el)
	}
	t.SetAttr("uid", uid)
}

// templateTaskPut answers POST (add) and PUT (replace an existing task)
// of a template task with the task as stored.
func (h *Handler) templateTaskPut(w http.ResponseWriter, r *http.Request) error {
	uid, taskUID, err := pathUIDs(r, "templateUid", "taskUid")
	if err != nil {
		return err
	}
	t, err := readTask(r, "taskdata", taskUID)
	if err != nil {
		return xmlError("taskdata", err)
	}
	if _, err := h.getDoc(r, store.TemplateDoc, uid); err != nil {
		return err
	}
	err = h.opts.Checklists.UpdateTemplate(r.Context(), uid, func(raw []byte) ([]byte, error) {
		d, old, err := docTask(raw, store.TemplateDoc, uid, taskUID)
		if r.Method == http.MethodPut && old == nil {
			return nil, err
		}
		if d == nil {
			return nil, err
		}
		fitTask(d, t, taskUID)
		d.PutTask(t)
		return d.Bytes(), nil
	})
	if err != nil {
		return err
	}
	h.log.Info("checklist template task stored", "template_uid", uid, "task_uid", taskUID)
	httpapi.WriteBody(w, http.StatusOK, xmlType, excheck.Document(t))
	return nil
}

func (h *Handler) templateTaskDelete(w http.ResponseWriter, r *http.Request) error {
	uid, taskUID, err := pathUIDs(r, "templateUid", "taskUid")
	if err != nil {
		return err
	}
	if _, err := h.getDoc(r, store.TemplateDoc, uid); err != nil {
		return err
	}
	err = h.opts.Checklists.UpdateTemplate(r.Context(), uid, func(raw []byte) ([]byte, error) {
		d, _, err := docTask(raw, store.TemplateDoc, uid, taskUID)
		if err != nil {
			return nil, err
		}
		d.DeleteTask(taskUID)
		return d.Bytes(), nil
	})
	if err != nil {
		return err
	}
	h.log.Info("checklist template task deleted", "template_uid", uid, "task_uid", taskUID)
	httpapi.WriteText(w, http.StatusOK, "done")
	return nil
}

// serveTemplate answers a sync download by hash that found no file when
// the hash is a template's: the templates are the contents of the
// exchecktemplates mission, and ATAK downloads them as sync files. It
// reports whether it answered.
func (h *Handler) serveTemplate(w http.ResponseWriter, r *http.Request, lookup error) bool {
	var he *httpapi.Error
	hash := r.URL.Query().Get("hash")
	if !errors.As(lookup, &he) || he.Status != http.StatusNotFound || hash == "" {
		return false
	}
	t, err := h.opts.Checklists.TemplateByHash(r.Context(), strings.ToLower(hash))
	if err != nil || !access.From(r).Sees(t.Groups) {
		return false
	}
	httpapi.ServeDownload(w, r, httpapi.Download{Name: t.UID + ".xml", MIMEType: xmlType, Hash: t.Hash, ModTime: t.Updated,
		Content: bytes.NewReader(t.XML)})
	return true
}

// templateContents are the exchecktemplates mission's contents: every
// template the caller's groups (sees, a mask) see. Only the contents are
// kept, never the templates' XML.
func (h *Handler) templateContents(ctx context.Context, sees uint64) ([]contentJSON, error) {
	out := []contentJSON{}
	err := h.opts.Checklists.EachTemplate(ctx, func(t store.ExCheckDoc) error {
		if store.Seen(t.Groups, sees) {
			out = append(out, contentJSON{Data: store.TemplateContent(t), Timestamp: httpapi.FormatTime(t.Updated), CreatorUID: t.CreatorUID})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
