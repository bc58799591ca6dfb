package rest_test

import (
	"testing"

	"github.com/docsapi/docsapi/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
