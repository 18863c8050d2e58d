//go:build linux

package diskfull

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// The sizes of the test: a 48 MiB filesystem as in issue 23, of which
// reserveBytes are taken by the filler file before the uploads (so that
// removing it frees room for a large upload again), uploads of chunkBytes
// until the disk refuses one, and bigBytes for the upload refused after the
// restart and taken once the filler is gone. bigBytes is more than the
// database can find in its free pages and its write-ahead log on the full
// disk (at most one refused upload and a few MiB of log), and less than
// the filler frees.
const (
	fsBytes      = 48 << 20
	reserveBytes = 28 << 20
	chunkBytes   = 3 << 20
	bigBytes     = 12 << 20
)

// TestStartOnFullDisk is issue 23: anonymous uploads fill the data
// filesystem, the rest is filled with a file, the power is cut (SIGKILL),
// and the server must start again on the full disk with the CoT relay on
// 8087 and 8089, every read route, uploads refused with 507 and a clear
// message, and uploads taken again once space is freed, without a restart.
func TestStartOnFullDisk(t *testing.T) {
	dataDir := testkit.SmallFS(t, fsBytes)
	certs := filepath.Join(t.TempDir(), "issued") // off the small filesystem
	outpost(t, dataDir, "cert", "issue", "alice", "--out", filepath.Join(certs, "alice"))
	// No reserve and no floor: this is the disk that fills to its last
	// byte anyway (a reserve set to 0, or space taken by another program),
	// so SQLite's own "disk is full" is what the server meets.
	// TestDiskReserveOnASmallDisk holds the reserve that normally comes first.
	args := []string{"--ssl-cot-port", "0", "--key-type", "ecdsa-p256", "--log-level", "info",
		"--disk-reserve", "0", "--disk-floor", "0"}
	p := testkit.Start(t, dataDir, args...)
	tcp := dial(t, p.Addr(t, "cot-tcp"), nil)
	tlsc := dial(t, p.Addr(t, "cot-tls"), clientTLS(t, dataDir, filepath.Join(certs, "alice"), "alice"))
	relay(t, tcp, tlsc, "BEFORE")

	filler := testkit.Fill(t, dataDir, "filler", testkit.FreeBytes(t, dataDir)-reserveBytes)
	var first []byte // the first upload, read back after the restart
	stored, refused := 0, false
	for i := 0; i < fsBytes/chunkBytes && !refused; i++ {
		body := random(t, chunkBytes)
		r := upload(t, p, "before", body)
		switch r.Status {
		case http.StatusOK:
			stored++
			if first == nil {
				first = body
			}
		case http.StatusInsufficientStorage:
			refused = true
			wantNoSpace(t, "the upload that found the disk full", r)
		default:
			t.Fatalf("upload %d: %d %.300s\n%s", i, r.Status, r.Body, p.LogText())
		}
	}
	if stored < 2 || !refused {
		t.Fatalf("%d uploads of %d MiB stored, refused: %v; want some stored, then a refusal", stored, chunkBytes>>20, refused)
	}
	testkit.Fill(t, dataDir, "filler", 0)
	t.Logf("%d uploads of %d MiB stored before the disk was full; %d bytes free", stored, chunkBytes>>20, testkit.FreeBytes(t, dataDir))
	relay(t, tlsc, tcp, "FULL-BEFORE-THE-CUT") // the relay keeps running on the full disk

	// The power cut.
	p.Signal(t, os.Kill, 10*time.Second)
	p = testkit.Start(t, dataDir, args...)
	if free := testkit.FreeBytes(t, dataDir); free > 1<<20 {
		t.Fatalf("%d bytes free after the restart: the disk is not full, the test proves nothing", free)
	}
	// The start wrote nothing it had: no error to log (a crl.pem it tried
	// to sign again, say).
	for _, l := range p.Logs() {
		if l["level"] == "ERROR" || l["level"] == "WARN" {
			t.Logf("the start on the full disk logged: %v", l)
		}
		if l["level"] == "ERROR" {
			t.Errorf("the start on the full disk logged an error")
		}
	}

	// The relay, both ways between 8087 and 8089.
	tcp = dial(t, p.Addr(t, "cot-tcp"), nil)
	tlsc = dial(t, p.Addr(t, "cot-tls"), clientTLS(t, dataDir, filepath.Join(certs, "alice"), "alice"))
	relay(t, tcp, tlsc, "FULL-TCP")
	relay(t, tlsc, tcp, "FULL-TLS")

	// Every read.
	token, err := os.ReadFile(filepath.Join(dataDir, "admin.token"))
	if err != nil {
		t.Fatalf("the first run's admin token: %v", err)
	}
	auth := []string{"Authorization", "Bearer " + strings.TrimSpace(string(token))}
	hash := sha(first)
	rest, api := "http://"+p.Addr(t, "rest"), "http://"+p.Addr(t, "http")
	for _, path := range []string{"/Alive", "/api/whoami", "/api/server", "/api/users", "/api/groups", "/api/missions",
		"/api/map", "/DataPackageTable"} {
		get(t, rest+path, auth...)
	}
	for _, path := range []string{"/Marti/api/version", "/Marti/api/version/config", "/Marti/api/clientEndPoints",
		"/Marti/api/contacts/all", "/Marti/api/groups/all", "/Marti/api/missions"} {
		get(t, api+path)
	}
	if r := get(t, api+"/Marti/sync/search"); !bytes.Contains(bytes.ToLower(r.Body), []byte(hash)) {
		t.Errorf("/Marti/sync/search does not list the package stored before the power cut: %.300s", r.Body)
	}
	for _, url := range []string{api + "/Marti/sync/content?hash=" + hash, rest + "/DataPackageTable/" + hash} {
		if r := get(t, url, auth...); !bytes.Equal(r.Body, first) {
			t.Errorf("GET %s: %d bytes, not the %d uploaded before the power cut", url, len(r.Body), len(first))
		}
	}

	// Uploads: refused while the disk is full, taken once space is freed.
	big := random(t, bigBytes)
	// The server refuses it part way and stops reading: the answer is read
	// while the body is still being sent.
	wantNoSpace(t, "an upload on the full disk", upload(t, p, "full", big))
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := upload(t, p, "freed", big); r.Status != http.StatusOK {
		t.Fatalf("upload after freeing %d MiB: %d %.300s", reserveBytes>>20, r.Status, r.Body)
	}
	if r := get(t, api+"/Marti/sync/content?hash="+sha(big)); !bytes.Equal(r.Body, big) {
		t.Fatalf("the upload taken after freeing space reads back as %d bytes, want %d", len(r.Body), len(big))
	}
	relay(t, tcp, tlsc, "FREED")

	// An orderly stop, the disk filled by someone else while the server is
	// down, and a start again: SQLite deletes its -wal and -shm files at an
	// orderly close unless told to keep them, and a new -shm needs space.
	if err, _ := p.Stop(t, 30*time.Second); err != nil {
		t.Errorf("the orderly stop: %v\n%s", err, p.LogText())
	}
	testkit.Fill(t, dataDir, "filler", 0)
	p = testkit.Start(t, dataDir, args...)
	relay(t, dial(t, p.Addr(t, "cot-tcp"), nil), dial(t, p.Addr(t, "cot-tls"), clientTLS(t, dataDir, filepath.Join(certs, "alice"), "alice")), "STOPPED")
	api = "http://" + p.Addr(t, "http")
	if r := get(t, api+"/Marti/sync/content?hash="+hash); !bytes.Equal(r.Body, first) {
		t.Fatalf("after an orderly stop and a start on the full disk the first package reads back as %d bytes", len(r.Body))
	}
	wantNoSpace(t, "an upload after an orderly stop and a start on the full disk", upload(t, p, "stopped", big))
}

// outpost runs a subcommand of the binary against the data directory.
func outpost(t *testing.T, dataDir string, args ...string) {
	t.Helper()
	args = append(args, "--data-dir", dataDir, "--log-level", "warn", "--key-type", "ecdsa-p256")
	if out, err := exec.Command(testkit.Binary(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("outpost %v: %v\n%s", args, err, out)
	}
}

func random(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// upload posts body anonymously to /Marti/sync/upload on 8080, as in the
// issue.
// upload posts body to enterprise sync. A server that refuses it part way
// (the disk filled) answers and stops reading: the answer is read while the
// body is still being sent.
func upload(t *testing.T, p *testkit.Proc, name string, body []byte) testkit.Response {
	t.Helper()
	return testkit.PostStreaming(t, p.Addr(t, "http"), "/Marti/sync/upload?name="+name+".bin&creatorUid=DISKFULL",
		"application/octet-stream", bytes.NewReader(body))
}

// wantNoSpace checks an upload was refused for lack of space, in words.
func wantNoSpace(t *testing.T, what string, r testkit.Response) {
	t.Helper()
	if r.Status != http.StatusInsufficientStorage || !strings.Contains(r.Message(), "no space left") {
		t.Fatalf("%s: %d %.300s; want 507 saying there is no space left", what, r.Status, r.Body)
	}
}

// get wants 200 from url.
func get(t *testing.T, url string, headers ...string) testkit.Response {
	t.Helper()
	r := testkit.Do(t, nil, "GET", url, nil, headers...)
	if r.Status != http.StatusOK {
		t.Errorf("GET %s on the full disk: %d %.300s", url, r.Status, r.Body)
	}
	return r
}

func dial(t *testing.T, addr string, cfg *tls.Config) *takclient.Client {
	t.Helper()
	c, err := takclient.Dial(addr, cfg)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// clientTLS is the configuration of a client holding the certificate
// issued to name in dir, trusting the data directory's CA.
func clientTLS(t *testing.T, dataDir, dir, name string) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(dataDir, "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1"}
}

// relay sends a position report from one client and waits for it at the
// other (a client that joined later gets it from the latest-SA replay).
func relay(t *testing.T, from, to *takclient.Client, uid string) {
	t.Helper()
	if err := from.Send(takclient.SA(uid, uid, 59.33, 18.06)); err != nil {
		t.Fatalf("send %s: %v", uid, err)
	}
	if _, err := to.WaitFor(func(e *cot.Event) bool { return e.UID == uid }, 30*time.Second); err != nil {
		t.Fatalf("%s not relayed: %v", uid, err)
	}
}
