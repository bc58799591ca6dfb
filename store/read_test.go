package store

import (
	"fmt"
	"sync"
	"testing"
)

// Nullable enum columns share one copy of each value between rows (and
// requests), up to maxInterned values; past that, values are copied as
// plain strings. Concurrent scans agree on the shared copy.
func TestInternedValues(t *testing.T) {
	first := interned([]byte("guest-test-value"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if got := interned([]byte("guest-test-value")); got != first {
					t.Errorf("a second scan of the same value got its own copy")
					return
				}
				v := fmt.Sprintf("concurrent-%d", i)
				if got := interned([]byte(v)); *got != v {
					t.Errorf("interned %q, got %q", v, *got)
					return
				}
			}
		}()
	}
	wg.Wait()
	if *first != "guest-test-value" {
		t.Fatalf("interned value %q", *first)
	}
	// Fill the table: values past it are still right, not shared.
	for i := range maxInterned {
		interned(fmt.Appendf(nil, "filler-%d", i))
	}
	a, b := interned([]byte("past the table")), interned([]byte("past the table"))
	if *a != "past the table" || *b != "past the table" || a == b {
		t.Fatalf("past maxInterned: %q %q, shared %v", *a, *b, a == b)
	}
	if n := len(*internedValues.Load()); n > maxInterned {
		t.Fatalf("%d values shared, at most %d", n, maxInterned)
	}
	if interned([]byte("guest-test-value")) != first {
		t.Fatal("a value shared before the table filled is no longer shared")
	}
}
