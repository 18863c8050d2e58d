package testkit

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// PostStreaming posts body to path on addr chunked (no length announced),
// reading the answer while it writes, as a client that keeps an eye on its
// connection does: a server that refuses an upload part way (a full disk,
// its reserve) answers and stops reading, and the rest of the body then
// fails to send without hiding the answer.
func PostStreaming(t testing.TB, addr, path, contentType string, body io.Reader) Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	go func() {
		w := bufio.NewWriter(conn)
		fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: outpost\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n", path, contentType)
		buf := make([]byte, 64<<10)
		for {
			n, err := body.Read(buf)
			if n > 0 {
				fmt.Fprintf(w, "%x\r\n", n)
				w.Write(buf[:n])
				w.WriteString("\r\n")
				if w.Flush() != nil {
					return // the server stopped reading
				}
			}
			if err != nil {
				w.WriteString("0\r\n\r\n")
				w.Flush()
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
