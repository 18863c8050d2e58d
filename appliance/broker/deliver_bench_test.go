package broker

import (
	"fmt"
	"testing"
)

// BenchmarkDeliver measures what the relay spends per event in the broker
// from publishing to every writer having taken it: Publish, then each of N
// sessions takes (no encoding; BenchmarkFanOutEncoded adds it). Per
// delivery, divide by N.
func BenchmarkDeliver(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			br, sessions, src := benchSessions(n)
			ev := sa("SRC", "SOURCE", "a-f-G-U-C")
			spares := make([][]*Envelope, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				br.Publish(ev, src)
				for j, s := range sessions {
					got := s.Take(spares[j])
					clear(got)
					spares[j] = got[:0]
				}
			}
		})
	}
}
