package httpapi

import (
	"mime"
	"testing"
)

func TestAttachment(t *testing.T) {
	for _, tc := range []struct{ name, want, parsed string }{
		{"route.kml", `attachment; filename="route.kml"`, "route.kml"},
		{"Recon 1 (final).zip", `attachment; filename="Recon 1 (final).zip"`, "Recon 1 (final).zip"},
		{`say "hi".txt`, `attachment; filename="say \"hi\".txt"`, `say "hi".txt`},
		{"50%25 done;x=y.zip", `attachment; filename="50%25 done;x=y.zip"`, "50%25 done;x=y.zip"},
		{"café.zip", `attachment; filename="caf_.zip"; filename*=UTF-8''caf%C3%A9.zip`, "café.zip"},
		{"Карта.kmz", `attachment; filename="_____.kmz"; filename*=UTF-8''%D0%9A%D0%B0%D1%80%D1%82%D0%B0.kmz`, "Карта.kmz"},
		{`地图 "v2".zip`, `attachment; filename="__ \"v2\".zip"; filename*=UTF-8''%E5%9C%B0%E5%9B%BE%20%22v2%22.zip`, `地图 "v2".zip`},
		{"🗺️.png", "", "🗺️.png"},
		// Rows stored before names were reduced: no path is ever offered.
		{"../../../../tmp/x", `attachment; filename="x"`, "x"},
		{`..\..\evil.exe`, `attachment; filename="evil.exe"`, "evil.exe"},
		{"/etc/passwd", `attachment; filename="passwd"`, "passwd"},
		{"a\r\nSet-Cookie: x=1", `attachment; filename="aSet-Cookie: x=1"`, "aSet-Cookie: x=1"},
		{"evil\u202egpj.exe", `attachment; filename="evilgpj.exe"`, "evilgpj.exe"},
		{"..", `attachment; filename="file"`, "file"},
		{"", `attachment; filename="file"`, "file"},
	} {
		cd := Attachment(tc.name)
		if tc.want != "" && cd != tc.want {
			t.Errorf("Attachment(%q) = %s, want %s", tc.name, cd, tc.want)
		}
		typ, params, err := mime.ParseMediaType(cd)
		if err != nil || typ != "attachment" || params["filename"] != tc.parsed {
			t.Errorf("Attachment(%q) = %s parses as %q %q %v, want the name %q", tc.name, cd, typ, params, err, tc.parsed)
		}
		for _, r := range cd {
			if r < 0x20 || r > 0x7e {
				t.Errorf("Attachment(%q) = %q: not plain ASCII", tc.name, cd)
				break
			}
		}
	}
}
