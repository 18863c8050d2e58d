package federation

// ROL programs: the text of a ROL message's `program` (docs/federation.md
// "Missions over ROL"). The official server writes each mission change as
// one statement, `<operation> <resource>` on a line, then its parameters as
// a JSON object, then `;` (the grammar is Rol.g4; the forms are those of
// MissionActionROLConverter.java and RemoteUtil.java's
// getROLforMissionChange; the JSON field names are those of
// MissionMetadata.java, MissionUpdateDetails.java, MissionContent.java and
// the sync model's Resource.java, as Jackson writes them). Outpost reads
// and writes the same forms; the grammar's other clauses (assignment,
// constraints, assertions) and parameters that are not a JSON object are
// not read: such a program is malformed here.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxProgram bounds a received ROL program's text.
const MaxProgram = 64 << 10

// maxStatements bounds the statements of one program.
const maxStatements = 16

// Mission change types of MissionUpdateDetails (MissionChangeType.java).
const (
	changeAddContent    = "ADD_CONTENT"
	changeRemoveContent = "REMOVE_CONTENT"
)

// statement is one ROL statement: an operation on a resource with its
// parameters (a JSON object).
type statement struct {
	op, resource string
	params       json.RawMessage
}

// rolOperations and rolResources are the grammar's keywords (Rol.g4).
var (
	rolOperations = set("create", "add", "remove", "update", "assign", "revoke", "get", "post", "put", "delete",
		"contains", "request", "announce", "disperse", "store", "enable", "disable")
	rolResources = set("query", "subscription", "staticsubscription", "role", "priority", "resource", "package",
		"mission", "input", "federation", "federate", "federated_connection", "data_feed")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var errMalformed = errors.New("malformed ROL program")

// parseProgram reads the statements of a program: each an operation and a
// resource of the grammar, then one JSON object, then `;`.
func parseProgram(program string) ([]statement, error) {
	if len(program) > MaxProgram {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", errMalformed, len(program), MaxProgram)
	}
	var out []statement
	rest := program
	for {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			break
		}
		if len(out) == maxStatements {
			return nil, fmt.Errorf("%w: more than %d statements", errMalformed, maxStatements)
		}
		var st statement
		var ok bool
		if st.op, rest, ok = word(rest); !ok || !rolOperations[st.op] {
			return nil, fmt.Errorf("%w: no operation", errMalformed)
		}
		if st.resource, rest, ok = word(rest); !ok || !rolResources[st.resource] {
			return nil, fmt.Errorf("%w: no resource after %q", errMalformed, st.op)
		}
		rest = strings.TrimLeft(rest, " \t\r\n")
		if !strings.HasPrefix(rest, "{") {
			return nil, fmt.Errorf("%w: %s %s: parameters are not a JSON object", errMalformed, st.op, st.resource)
		}
		dec := json.NewDecoder(strings.NewReader(rest))
		if err := dec.Decode(&st.params); err != nil {
			return nil, fmt.Errorf("%w: %s %s: parameters: %v", errMalformed, st.op, st.resource, err)
		}
		rest = strings.TrimLeft(rest[dec.InputOffset():], " \t\r\n")
		if !strings.HasPrefix(rest, ";") {
			return nil, fmt.Errorf("%w: %s %s: no ';'", errMalformed, st.op, st.resource)
		}
		rest = rest[1:]
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty", errMalformed)
	}
	return out, nil
}

// word takes the next word (letters and '_') of s.
func word(s string) (w, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] == '_') {
		i++
	}
	return s[:i], s[i:], i > 0
}

// program writes one statement as the official server does: operation and
// resource, a newline, the parameters as JSON, `;`.
func program(op, resource string, params any) (string, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return "", err
	}
	return op + " " + resource + "\n" + string(b) + ";", nil
}

// missionMetadata is the parameters of `create mission` and `delete
// mission` (MissionMetadata.java; Jackson's type property names the class).
type missionMetadata struct {
	Type            string `json:"type"`
	Name            string `json:"name"`
	CreatorUID      string `json:"creatorUid"`
	Description     string `json:"description"`
	ChatRoom        string `json:"chatRoom"`
	Tool            string `json:"tool"`
	BoundingPolygon string `json:"boundingPolygon"`
	BBox            string `json:"bbox"`
	PasswordHash    string `json:"passwordHash"`
	Path            string `json:"path"`
	Classification  string `json:"classification"`
	BaseLayer       string `json:"baseLayer"`
	ParentMissionID int64  `json:"parentMissionId"`
	DefaultRoleID   int64  `json:"defaultRoleId"`
	Expiration      int64  `json:"expiration"`
	InviteOnly      bool   `json:"inviteOnly"`
	GUID            string `json:"guid,omitempty"`
}

// missionContent is MissionContent.java: files by hash, CoT uids.
type missionContent struct {
	Hashes []string `json:"hashes"`
	UIDs   []string `json:"uids"`
}

// missionUpdate is the parameters of `update mission` for contents
// (MissionUpdateDetails.java; Date is milliseconds, as Jackson writes a
// java.util.Date by default; read as any JSON value, it is not used).
type missionUpdate struct {
	Content            missionContent  `json:"content"`
	CreatorUID         string          `json:"creatorUid"`
	ChangeType         string          `json:"changeType"`
	MissionName        string          `json:"missionName"`
	MissionCreatorUID  string          `json:"missionCreatorUid"`
	MissionChatRoom    string          `json:"missionChatRoom"`
	MissionTool        string          `json:"missionTool"`
	MissionDescription string          `json:"missionDescription"`
	Date               json.RawMessage `json:"date,omitempty"`
}

// resourceMeta is the parameters of `create resource` (the sync model's
// Resource.java): a file's metadata; its bytes are the ROL's first payload.
type resourceMeta struct {
	Filename       string   `json:"filename"`
	Keywords       []string `json:"keywords"`
	MIMEType       string   `json:"mimeType"`
	Name           string   `json:"name"`
	SubmissionTime string   `json:"submissionTime,omitempty"`
	Submitter      string   `json:"submitter"`
	UID            string   `json:"uid"`
	CreatorUID     string   `json:"creatorUid"`
	Hash           string   `json:"hash"`
	Size           int64    `json:"size"`
	Tool           string   `json:"tool,omitempty"`
}

// decodeParams reads a statement's parameters into v, refusing trailing
// data (the JSON object was already delimited by parseProgram).
func decodeParams(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: parameters: %v", errMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: parameters: trailing data", errMalformed)
	}
	return nil
}
