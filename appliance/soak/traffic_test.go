//go:build soak

package soak

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// traffic is everything the soak does to the server at once. Each loop
// counts what it did and what failed; a failure is reported, not fatal,
// so one refused request does not end an hour's run, but any fails the
// test at the end.
type traffic struct {
	t     *testing.T
	p     *testkit.Proc
	token string
	until time.Time

	wg       sync.WaitGroup
	loadOut  bytes.Buffer
	loadErr  error
	loadJSON string

	ops, fails atomic.Int64
	mu         sync.Mutex
	firstFails []string
}

func (tr *traffic) run(d time.Duration) {
	tr.startLoad(d)
	for i := range 3 {
		name := fmt.Sprintf("soak-%d", i)
		tr.loop(name, func(n int) error { return tr.missionRound(name, n) })
	}
	tr.loop("upload", tr.uploadRound)
	tr.loop("reconnect", tr.reconnectRound)
	tr.loop("rest", tr.restRound)
}

// startLoad runs the load tool's S2 mixed scenario for d over CoT TCP.
func (tr *traffic) startLoad(d time.Duration) {
	t := tr.t
	bin := filepath.Join(t.TempDir(), "outpost-load")
	build := exec.Command("go", "build", "-o", bin, "./cmd/outpost-load")
	build.Dir = testkit.ModuleRoot(t)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building outpost-load: %v\n%s", err, out)
	}
	tr.loadJSON = filepath.Join(t.TempDir(), "load.json")
	cmd := exec.Command(bin, "--addr", tr.p.Addr(t, "cot-tcp"), "--clients", "100", "--rate", "2",
		"--proto", "0.5", "--slow", "0.1", "--slow-rate", "1024", "--ramp", "5s", "--warmup", "5s",
		"--duration", d.String(), "--json", tr.loadJSON,
		// a source address per client: the server admits 64 connections per address
		"--local-addrs", "127.0.10.1-127.0.10.100")
	cmd.Stdout, cmd.Stderr = &tr.loadOut, &tr.loadOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		tr.loadErr = cmd.Wait()
	}()
}

// loop runs round until the soak ends, a round about every 200 ms.
func (tr *traffic) loop(name string, round func(n int) error) {
	tr.wg.Add(1)
	go func() {
		defer tr.wg.Done()
		for n := 0; time.Now().Before(tr.until); n++ {
			tr.ops.Add(1)
			if err := round(n); err != nil {
				tr.fails.Add(1)
				tr.mu.Lock()
				if len(tr.firstFails) < 10 {
					tr.firstFails = append(tr.firstFails, fmt.Sprintf("%s round %d: %v", name, n, err))
				}
				tr.mu.Unlock()
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

func (tr *traffic) wait() { tr.wg.Wait() }

// report fails the test for any failed round, and for the load tool's
// full-speed clients losing reports or clients never connecting.
func (tr *traffic) report() {
	t := tr.t
	t.Logf("rounds: %d, failed: %d", tr.ops.Load(), tr.fails.Load())
	for _, f := range tr.firstFails {
		t.Errorf("%s", f)
	}
	if tr.loadErr != nil {
		t.Errorf("outpost-load: %v\n%s", tr.loadErr, tr.loadOut.String())
		return
	}
	t.Logf("outpost-load:\n%s", tr.loadOut.String())
	var rep struct {
		Clients struct {
			Requested int `json:"requested"`
			Connected int `json:"connected"`
			Failed    int `json:"failed"`
		} `json:"clients"`
		Load struct {
			Normal struct {
				Percent float64 `json:"delivered_percent"`
			} `json:"normal"`
		} `json:"load"`
	}
	b, err := os.ReadFile(tr.loadJSON)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatalf("the load tool's report: %v", err)
	}
	if rep.Clients.Failed > 0 || rep.Clients.Connected < rep.Clients.Requested {
		t.Errorf("load clients: %d of %d connected, %d never did", rep.Clients.Connected, rep.Clients.Requested, rep.Clients.Failed)
	}
	if rep.Load.Normal.Percent < 99 {
		t.Errorf("the full-speed load clients received %.2f %% of the reports, want 99 %% or more", rep.Load.Normal.Percent)
	}
}

var httpc = &http.Client{Timeout: 30 * time.Second}

// call makes one request and checks its status; it returns the body.
func (tr *traffic) call(method, url string, body []byte, want int, headers ...string) ([]byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, want %d: %.200s", method, url, resp.StatusCode, want, out)
	}
	return out, nil
}

func (tr *traffic) client(path string) string { return "http://" + tr.p.Addr(tr.t, "http") + path }
func (tr *traffic) mgmt(path string) string   { return "http://" + tr.p.Addr(tr.t, "rest") + path }

// missionRound: a mission's life as ATAK lives it, without the end (the
// interface deletes no mission): create it once, then subscribe, write a
// log entry, add an uploaded file to its contents, read it with its logs
// and changes, take the file and the entry away, and unsubscribe.
func (tr *traffic) missionRound(name string, n int) error {
	uid := "SOAK-M-" + name
	if n == 0 {
		if _, err := tr.call("PUT", tr.client("/Marti/api/missions/"+name+"?creatorUid="+uid), nil, http.StatusCreated); err != nil {
			return err
		}
	}
	if _, err := tr.call("PUT", tr.client("/Marti/api/missions/"+name+"/subscription?uid="+uid), nil, http.StatusCreated); err != nil {
		return err
	}
	entry, err := json.Marshal(map[string]any{"content": fmt.Sprintf("round %d", n), "creatorUid": uid, "missionNames": []string{name}})
	if err != nil {
		return err
	}
	out, err := tr.call("POST", tr.client("/Marti/api/missions/logs/entries"), entry, http.StatusCreated, "Content-Type", "application/json")
	if err != nil {
		return err
	}
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.Data.ID == "" {
		return fmt.Errorf("the created log entry: %v: %.200s", err, out)
	}
	hash, err := tr.upload(uid, 8<<10)
	if err != nil {
		return err
	}
	contents, _ := json.Marshal(map[string]any{"hashes": []string{hash}})
	if _, err := tr.call("PUT", tr.client("/Marti/api/missions/"+name+"/contents?creatorUid="+uid), contents, http.StatusOK, "Content-Type", "application/json"); err != nil {
		return err
	}
	if _, err := tr.call("GET", tr.client("/Marti/api/missions/"+name+"?logs=true&changes=true"), nil, http.StatusOK); err != nil {
		return err
	}
	if _, err := tr.call("DELETE", tr.client("/Marti/api/missions/"+name+"/contents?hash="+hash+"&creatorUid="+uid), nil, http.StatusOK); err != nil {
		return err
	}
	if _, err := tr.call("DELETE", tr.client("/Marti/api/missions/logs/entries/"+created.Data.ID), nil, http.StatusOK); err != nil {
		return err
	}
	if err := tr.deletePackage(hash); err != nil {
		return err
	}
	_, err = tr.call("DELETE", tr.client("/Marti/api/missions/"+name+"/subscription?uid="+uid), nil, http.StatusOK)
	return err
}

// uploadRound: a 256 KiB file up through enterprise sync, down again, and
// deleted by the operator.
func (tr *traffic) uploadRound(n int) error {
	hash, err := tr.upload(fmt.Sprintf("SOAK-U-%d", n%7), 256<<10)
	if err != nil {
		return err
	}
	if _, err := tr.call("GET", tr.client("/Marti/sync/content?hash="+hash), nil, http.StatusOK); err != nil {
		return err
	}
	return tr.deletePackage(hash)
}

// upload stores size random bytes through POST /Marti/sync/upload and
// returns their hash.
func (tr *traffic) upload(uid string, size int) (string, error) {
	data := make([]byte, size)
	rand.Read(data)
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	_, err := tr.call("POST", tr.client("/Marti/sync/upload?filename=soak.bin&creatorUid="+uid+"&hash="+hash), data, http.StatusOK,
		"Content-Type", "application/octet-stream")
	return hash, err
}

func (tr *traffic) deletePackage(hash string) error {
	body, _ := json.Marshal(map[string]any{"DataPackages": []map[string]string{{"hash": hash}}})
	_, err := tr.call("DELETE", tr.mgmt("/DataPackageTable"), body, http.StatusOK,
		"Authorization", "Bearer "+tr.token, "Content-Type", "application/json")
	return err
}

// reconnectRound: a client connects, reports its position, reads the
// others' for a moment and leaves.
func (tr *traffic) reconnectRound(n int) error {
	c, err := takclient.Dial(tr.p.Addr(tr.t, "cot-tcp"), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	uid := fmt.Sprintf("SOAK-R-%d", n%50)
	if err := c.Send(takclient.SA(uid, uid, 59.3+float64(n%100)/1000, 18.06)); err != nil {
		return err
	}
	_, err = c.Next(5 * time.Second)
	return err
}

// restRound: an operator's console reading the management API.
func (tr *traffic) restRound(n int) error {
	paths := []string{"/ManageGeoObject/getGeoObject?latitude=59.3&longitude=18.06&radius=2000",
		"/ManageEmergency/getEmergency", "/DataPackageTable", "/ManageSystemUser/getAll", "/Clients"}
	_, err := tr.call("GET", tr.mgmt(paths[n%len(paths)]), nil, http.StatusOK, "Authorization", "Bearer "+tr.token)
	return err
}
