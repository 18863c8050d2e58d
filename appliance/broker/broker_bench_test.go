package broker

import (
	"fmt"
	"testing"

	"outpost/appliance/cot"
)

// benchSessions is a broker with n listening sessions and a source session
// that publishes to them.
func benchSessions(n int) (br *Broker, sessions []*Session, src *Session) {
	br = New(Options{Logger: quiet})
	sessions = make([]*Session, n)
	for i := range sessions {
		sessions[i] = br.Join(SessionInfo{})
	}
	return br, sessions, br.Join(SessionInfo{})
}

// BenchmarkFanOut measures routing one SA to N sessions: the broker's share
// of the relay (envelope, the XML encoding every writer then shares, the
// 64 KiB check, identity update, one log append). The protobuf encoding
// happens in the writers and is measured separately
// (BenchmarkFanOutEncoded). Queues are drained outside the timer.
func BenchmarkFanOut(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			br, sessions, src := benchSessions(n)
			ev := sa("SRC", "SOURCE", "a-f-G-U-C")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				br.Publish(ev, src)
				if i%256 == 255 {
					b.StopTimer()
					for _, s := range sessions {
						s.Take(nil)
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkFanOutEncoded adds what the writers do per event: every session
// asks for its wire format, half XML and half protobuf; each format is
// encoded once and shared.
func BenchmarkFanOutEncoded(b *testing.B) {
	br, sessions, src := benchSessions(1000)
	ev := sa("SRC", "SOURCE", "a-f-G-U-C")
	spare := make([]*Envelope, 0, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br.Publish(ev, src)
		for j, s := range sessions {
			got := s.Take(spare)
			for _, env := range got {
				if j%2 == 0 {
					_ = env.XML()
				} else if _, err := env.ProtoFrame(); err != nil {
					b.Fatal(err)
				}
			}
			spare = got[:0]
		}
	}
}

// BenchmarkDirected routes a chat addressed by callsign among 1000 sessions.
func BenchmarkDirected(b *testing.B) {
	br, sessions, src := benchSessions(1000)
	for i, s := range sessions {
		br.Publish(sa(fmt.Sprintf("U%d", i), fmt.Sprintf("CS%d", i), "a-f-G"), s)
	}
	ev := chat("SRC", cot.Dest{Callsign: "CS500"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br.Publish(ev, src)
		if i%256 == 255 {
			b.StopTimer()
			sessions[500].Take(nil)
			b.StartTimer()
		}
	}
}
