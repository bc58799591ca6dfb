package store

import (
	"strings"
	"testing"
)

// Each migration has a number of its own: bun keys migrations by the part
// of the file name before its first underscore, so two files with one
// number would be one migration, and one of them would never run (two
// branches that each took the next number, merged).
func TestMigrationNumbersAreUnique(t *testing.T) {
	files, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range files {
		number, _, _ := strings.Cut(f.Name(), "_")
		if other, ok := seen[number]; ok {
			t.Errorf("migrations %s and %s share the number %s", other, f.Name(), number)
		}
		seen[number] = f.Name()
	}
}
