package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Where a pass's CPU went. At a fixed concurrency on a small machine,
// throughput is CPU per request: this process's (docsapi or the baseline,
// with the load generator, which costs both sides alike) and PostgreSQL's
// (every process named postgres on this machine, which is the embedded
// server's when DATABASE_URL is unset). Read from getrusage and /proc, so
// on Linux only; elsewhere the figures are left out.

// cpuTimes is the CPU time spent so far, user and system.
type cpuTimes struct {
	self, postgres time.Duration
	ok             bool
}

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on every
// Linux port Go supports).
const clockTick = 10 * time.Millisecond

func readCPU() cpuTimes { return readCPUOf(nil) }

// readCPUOf is readCPU counting, of the postgres processes, only the
// servers whose postmasters are postmasters (and their children): on a
// machine running other PostgreSQL servers. nil counts them all.
func readCPUOf(postmasters []int) cpuTimes {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}
	}
	t := cpuTimes{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return cpuTimes{}
	}
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended
		}
		if postmasters != nil && !ofPostmaster(raw, postmasters) {
			continue
		}
		t.postgres += postgresTicks(raw) * clockTick
	}
	t.ok = true
	return t
}

// postgresTicks is utime+stime of a /proc/<pid>/stat line when its command
// is postgres, 0 otherwise. The command is in parentheses and may hold
// spaces; the fields after it are space-separated, utime and stime being
// the 12th and 13th.
func postgresTicks(stat []byte) time.Duration {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open || string(stat[open+1:end]) != "postgres" {
		return 0
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime + stime)
}

// ofPostmaster tells whether the process of a /proc/<pid>/stat line is
// one of postmasters or a child of one.
func ofPostmaster(stat []byte, postmasters []int) bool {
	end, sp := bytes.LastIndexByte(stat, ')'), bytes.IndexByte(stat, ' ')
	if end < 0 || sp < 0 || sp > end {
		return false
	}
	pid, _ := strconv.Atoi(string(stat[:sp]))
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 2 {
		return false
	}
	ppid, _ := strconv.Atoi(string(fields[1]))
	for _, pm := range postmasters {
		if pid == pm || ppid == pm {
			return true
		}
	}
	return false
}

// cpuPerRequest is the CPU spent between two readings per request, or
// false when either reading failed.
func cpuPerRequest(before, after cpuTimes, requests int) (self, postgres time.Duration, ok bool) {
	if !before.ok || !after.ok || requests == 0 {
		return 0, 0, false
	}
	n := time.Duration(requests)
	return (after.self - before.self) / n, (after.postgres - before.postgres) / n, true
}
