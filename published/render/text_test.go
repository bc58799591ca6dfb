package render

import "testing"

func TestAnchorOfIsTheIDRenderGives(t *testing.T) {
	for heading, want := range map[string]string{
		"Install":                            "install",
		"Install the **CLI** `v2`":           "install-the-cli-v2",
		`Usage <a href="#use" id="use"></a>`: "use",
		"Café au lait":                       "cafe-au-lait",
		"[Linked](other.md) heading":         "linked-heading",
	} {
		res, err := Render("## "+heading+"\n\nText.\n", Options{})
		if err != nil || len(res.Outline) != 1 {
			t.Fatalf("%q: %v %v", heading, res, err)
		}
		if got := AnchorOf(heading); got != want || got != res.Outline[0].ID {
			t.Errorf("AnchorOf(%q) = %q, Render gives %q, want %q", heading, got, res.Outline[0].ID, want)
		}
	}
}

func TestPlainText(t *testing.T) {
	md := "Install **the tool** with [brew](https://brew.sh).\n\n```bash\nbrew install tool\n```\n\n{% hint style=\"info\" %}\nA hint.\n{% endhint %}\n"
	if got, want := PlainText(md, 200), "Install the tool with brew . A hint."; got != want && got != "Install the tool with brew. A hint." {
		t.Errorf("PlainText = %q", got)
	}
	if got := PlainText("one two three four five six seven", 15); got != "one two three …" {
		t.Errorf("cut: %q", got)
	}
}
