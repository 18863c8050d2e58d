package testkit

import (
	"bufio"
	"encoding/json"
	"io"
)

// JSONLines reads r (an interop script's standard output) line by line and
// sends each line decoded as a JSON object; a line that is not one comes as
// {"step": "not-json", "line": <the line>}. The channel is closed at EOF.
func JSONLines(r io.Reader) <-chan map[string]any {
	out := make(chan map[string]any, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"step": "not-json", "line": sc.Text()}
			}
			out <- m
		}
	}()
	return out
}
