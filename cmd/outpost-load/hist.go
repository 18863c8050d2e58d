package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram counts latencies in log-linear buckets: exact below 128 ns,
// then 64 buckets per power of two (at most 1.6 % relative error), up to
// about 2^40 ns (18 minutes). Receivers add to it concurrently with atomic
// adds, so it costs no lock and no memory per delivery; hists shards it
// to keep the two cores off each other's cache lines.
type histogram struct {
	counts [histBuckets]atomic.Uint64
	max    atomic.Int64
}

const (
	histSub     = 64 // buckets per power of two
	histSubBits = 6
	histBuckets = (41-histSubBits)*histSub + 2*histSub
)

func bucketOf(ns int64) int {
	if ns < 2*histSub {
		return int(max(ns, 0))
	}
	e := bits.Len64(uint64(ns)) // ns in [2^(e-1), 2^e)
	shift := e - histSubBits - 1
	i := shift*histSub + int(uint64(ns)>>shift)
	return min(i, histBuckets-1)
}

// bucketValue is the middle of bucket i, in nanoseconds.
func bucketValue(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	shift := i/histSub - 1
	m := int64(i - shift*histSub)
	return m<<shift + (int64(1)<<shift)/2
}

func (h *histogram) add(ns int64) {
	h.counts[bucketOf(ns)].Add(1)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// hists is a sharded histogram; shard i%len is used by client i.
type hists []*histogram

func newHists(shards int) hists {
	h := make(hists, shards)
	for i := range h {
		h[i] = &histogram{}
	}
	return h
}

func (h hists) shard(i int) *histogram { return h[i%len(h)] }

// latency summarises a histogram.
type latency struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p99_9_ms"`
	Max   float64 `json:"max_ms"`
}

func (h hists) summary() latency {
	var counts [histBuckets]uint64
	var total uint64
	var mx int64
	for _, s := range h {
		for i := range counts {
			c := s.counts[i].Load()
			counts[i] += c
			total += c
		}
		mx = max(mx, s.max.Load())
	}
	l := latency{Count: total, Max: ms(mx)}
	if total == 0 {
		return l
	}
	q := func(p float64) float64 {
		rank := uint64(p * float64(total-1))
		var seen uint64
		for i, c := range counts {
			seen += c
			if seen > rank {
				return ms(min(bucketValue(i), mx))
			}
		}
		return ms(mx)
	}
	l.P50, l.P90, l.P99, l.P999 = q(0.50), q(0.90), q(0.99), q(0.999)
	return l
}

func ms(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }
