//go:build !unix

package main

import "time"

func raiseFileLimit(need int) (uint64, error) { return 0, nil }

func selfCPU() time.Duration { return 0 }

func selfMaxRSS() int64 { return 0 }
