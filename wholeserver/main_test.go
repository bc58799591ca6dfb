package wholeserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// restFile reads a file of the rest package's folder (an operation document,
// GitBook's reference, the specification's list of operations): what the
// server is built from, which the tests compare its answers with.
func restFile(name string) ([]byte, error) { return os.ReadFile(filepath.Join("..", "rest", name)) }
