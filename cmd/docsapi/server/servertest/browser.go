package servertest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// BrowserTools finds node (18 or later) and Chromium for a test that drives
// a browser through playwright-core, or skips the test saying what is
// missing (short tests skip it too). CHROMIUM names another browser.
func BrowserTools(t testing.TB) (node, chromium string) {
	t.Helper()
	node = NodeTool(t, "the browser test", "nodejs npm chromium")
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return node, p
		}
	}
	t.Skip("chromium is not installed: the browser test needs node and chromium (apt-get install nodejs npm chromium)")
	return "", ""
}

// NodeTool finds node (18 or later) for a test (what, such as "the browser
// test") that runs node scripts, or skips it saying what to install
// (packages, Debian's names); short tests skip it too.
func NodeTool(t testing.TB, what, packages string) string {
	t.Helper()
	if testing.Short() {
		t.Skip(what + " is not short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node is not installed: %s needs it (apt-get install %s)", what, packages)
	}
	// playwright-core 1.61, the last to support Debian 12's node 18.
	out, err := exec.Command(node, "--version").Output()
	var major int
	if _, scanErr := fmt.Sscanf(string(out), "v%d.", &major); err != nil || scanErr != nil || major < 18 {
		t.Skipf("node %q is too old (or does not run: %v): %s needs node 18 or later", strings.TrimSpace(string(out)), err, what)
	}
	return node
}
