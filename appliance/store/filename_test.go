package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestFileNamesStoredAndRead: a data package's file name is kept as a base
// name however it comes in (PutDataPackage, UpdateDataPackages), and a row or
// a change record written before names were reduced is read back without
// its path (architecture.md "File names").
func TestFileNamesStoredAndRead(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "../../../../tmp/x.zip"}, strings.NewReader("one"))
	if err != nil || p.Name != "x.zip" {
		t.Fatalf("put: %q %v", p.Name, err)
	}
	var raw string
	s.w.QueryRow(`SELECT name FROM data_packages WHERE id = ?`, p.PrimaryKey).Scan(&raw)
	if raw != "x.zip" {
		t.Fatalf("stored %q", raw)
	}
	name := `..\..\renamed.zip`
	if err := s.Files().UpdateDataPackages(ctx, []DataPackageUpdate{{PrimaryKey: p.PrimaryKey, Name: &name}}); err != nil {
		t.Fatal(err)
	}
	s.w.QueryRow(`SELECT name FROM data_packages WHERE id = ?`, p.PrimaryKey).Scan(&raw)
	if raw != "renamed.zip" {
		t.Fatalf("renamed to %q", raw)
	}

	// Written by an older version.
	if _, err := s.w.Exec(`UPDATE data_packages SET name = '/etc/cron.d/.old' WHERE id = ?`, p.PrimaryKey); err != nil {
		t.Fatal(err)
	}
	byHash, err := s.Files().DataPackageByHash(ctx, p.Hash)
	list, err2 := s.Files().DataPackages(ctx)
	if err != nil || err2 != nil || byHash.Name != "old" || len(list) != 1 || list[0].Name != "old" {
		t.Fatalf("an old row reads as %q and lists as %+v (%v %v)", byHash.Name, list, err, err2)
	}
	if _, _, _, err := s.Missions().PutMission(ctx, "ops", MissionInput{CreatorUID: "owner"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Missions().AddMissionContents(ctx, "ops", []string{p.Hash}, nil, "owner"); err != nil {
		t.Fatal(err)
	}
	res, err := s.w.Exec(`UPDATE mission_changes SET body = replace(body, '"old"', '"../../old"') WHERE type = ? AND body LIKE '%"old"%'`, ChangeAddContent)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("writing an old change record changed %d rows", n)
	}
	changes, _, err := s.Missions().MissionChanges(ctx, "ops", time.Time{}, time.Time{}, Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range changes {
		if cr := c.ContentResource; cr != nil {
			found = true
			if cr.Name != "old" || cr.Filename != "old" {
				t.Errorf("an old change record reads as name %q, filename %q", cr.Name, cr.Filename)
			}
		}
	}
	if !found {
		t.Fatalf("no content change among %+v", changes)
	}
	if cr := TemplateContent(ExCheckDoc{UID: "../../t"}); cr.Filename != "t.xml" {
		t.Errorf("a template's filename %q", cr.Filename)
	}
}
