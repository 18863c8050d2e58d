package store

// Keyword rules of data packages, shared by the management API
// (/DataPackageTable, api.md §2.8) and the client API's enterprise sync
// (api.md §2.9): one table, two interfaces, one set of rules.

import (
	"fmt"
	"strings"
)

// MissionPackageKeyword is the keyword every upload is tagged with (api.md §2.8).
const MissionPackageKeyword = "missionpackage"

// UploadKeywords are the stored keywords of a new upload: the type keyword
// and any extra ones, cleaned and without duplicates.
func UploadKeywords(extra ...string) []string {
	return dedupeKeywords(append([]string{MissionPackageKeyword}, extra...))
}

// ParseKeywords reads a comma-separated keyword list (api.md §2.8 Keywords):
// items are trimmed, empty ones dropped, duplicates removed. ErrInvalid
// when the list breaks the stored limits.
func ParseKeywords(list string) ([]string, error) {
	return CleanKeywords(strings.Split(list, ","))
}

// CleanKeywords applies ParseKeywords' rules to a list of keywords.
func CleanKeywords(items []string) ([]string, error) {
	out := dedupeKeywords(items)
	if len(out) > maxKeywords {
		return nil, fmt.Errorf("%w: %d keywords, at most %d", ErrInvalid, len(out), maxKeywords)
	}
	for _, k := range out {
		if err := checkText("keyword", k, 1, maxKeywordLen); err != nil {
			return nil, err
		}
		if strings.Contains(k, ",") {
			return nil, fmt.Errorf("%w: keyword %q contains a comma", ErrInvalid, k)
		}
	}
	return out, nil
}

// JoinKeywords is the comma-separated form of api.md §2.8.
func JoinKeywords(kw []string) string { return strings.Join(kw, ",") }

// SyncKeywords is the keyword array of an enterprise sync record (api.md
// §2.9): the stored keywords, then the file name and the submitter's uid.
func SyncKeywords(p DataPackage) []string {
	return dedupeKeywords(append(append([]string{}, p.Keywords...), p.Name, p.SubmissionUser))
}

func dedupeKeywords(items []string) []string {
	out := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, k := range items {
		k = strings.TrimSpace(k)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}
