package main

import (
	"testing"
	"time"
)

func TestPostgresTicks(t *testing.T) {
	for _, c := range []struct {
		stat string
		want time.Duration
	}{
		// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
		{"4242 (postgres) S 1 4242 4242 0 -1 4194560 120 0 0 0 37 5 0 0 20 0", 42},
		{"17 (postgres_export) S 1 17 17 0 -1 0 1 0 0 0 9 1 0 0", 0}, // another command
		{"99 (go (weird)) R 1 99 99 0 -1 0 0 0 0 0 300 30 0 0", 0},
		{"7 (postgres) S 1", 0}, // cut short
	} {
		if got := postgresTicks([]byte(c.stat)); got != c.want {
			t.Errorf("postgresTicks(%q) = %d, want %d", c.stat, got, c.want)
		}
	}
}

func TestOfPostmaster(t *testing.T) {
	for _, c := range []struct {
		stat string
		want bool
	}{
		{"4242 (postgres) S 1 4242 4242 0 -1 4194560 120 0 0 0 37 5 0 0 20 0", true}, // a postmaster
		{"4300 (postgres) S 4242 4300 4300 0 -1 0 0 0 0 0 3 1 0 0", true},            // its backend
		{"5000 (postgres) S 4999 5000 5000 0 -1 0 0 0 0 0 3 1 0 0", false},           // another server's
		{"5001 (go (weird)) S 4242 5001 5001 0", true},
		{"garbage", false}, {"(x)", false},
	} {
		if got := ofPostmaster([]byte(c.stat), []int{4242, 777}); got != c.want {
			t.Errorf("ofPostmaster(%q) = %v", c.stat, got)
		}
	}
}
