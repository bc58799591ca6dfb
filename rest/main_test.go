package rest_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
