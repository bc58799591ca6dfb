package published_test

import (
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

// TestMain stops the test database server the tests started, and removes
// its data, when they end.
func TestMain(m *testing.M) { pgtest.Main(m) }
