package customization

import (
	"encoding/json"
	"strings"
	"testing"
)

// decode is the JSON src as a client sends it (numbers as json.Number).
func decode(t *testing.T, src string) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(src))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return m
}

// with is the defaults with patch (JSON) over them, as a site space's
// overrides go over its site's settings: a whole settings object that
// differs from the defaults by patch.
func with(t *testing.T, patch string) map[string]any {
	t.Helper()
	return Merge(Defaults(), decode(t, patch))
}

func TestDefaultsAreValidSettings(t *testing.T) {
	if err := CheckSettings(Defaults()); err != nil {
		t.Fatal(err)
	}
	// Each call is a copy of its own.
	a, b := Defaults(), Defaults()
	a["styling"].(map[string]any)["theme"] = "bold"
	if b["styling"].(map[string]any)["theme"] != "clean" {
		t.Error("Defaults share their maps")
	}
}

func TestCheckSettings(t *testing.T) {
	valid := map[string]string{
		"the defaults":           `{}`,
		"a title":                `{"title": "Acme docs"}`,
		"a three-digit color":    `{"styling": {"primaryColor": {"light": "#fff", "dark": "#000"}}}`,
		"a tint":                 `{"styling": {"tint": {"color": {"light": "#112233", "dark": "#445566"}}}}`,
		"a locale with a region": `{"internationalization": {"locale": "pt-br"}}`,
		"a favicon emoji":        `{"favicon": {"emoji": "🎉"}}`,
		"a favicon icon":         `{"favicon": {"icon": {"light": "https://example.com/l.png", "dark": "https://example.com/d.png"}}}`,
		"a custom font": `{"styling": {"font": {"id": "brand", "custom": true, "fontFamily": "Brand Sans",
			"fontFaces": [{"weight": 400, "sources": [{"url": "https://cdn.example.com/brand.woff2", "format": "woff2"}]}]}}}`,
		"header links": `{"header": {"preset": "bold", "links": [
			{"title": "Home", "to": {"kind": "url", "url": "https://example.com"}, "links": [], "style": "button-primary"},
			{"title": "Menu", "to": null, "links": [{"title": "Guide", "to": {"kind": "page", "page": "p1"}}],
			 "condition": "visitor.claims.beta === true"},
			{"title": "Mail", "to": {"kind": "url", "url": "mailto:docs@example.com"}, "links": [], "condition": ""}]}}`,
		"footer groups": `{"footer": {"copyright": "© Acme", "groups": [{"title": "More", "links": [{"title": "API", "to": {"kind": "openapi", "spec": "api"}}]}]}}`,
		"an announcement": `{"announcement": {"enabled": true, "message": "New: dark mode", "style": "info",
			"link": {"title": "Read", "to": {"kind": "space", "space": "s1"}}}}`,
		"a privacy policy": `{"privacyPolicy": {"url": "https://example.com/privacy"}}`,
		"features on":      `{"pdf": {"enabled": true}, "ai": {"mode": "assistant"}, "externalLinks": {"target": "blank"}}`,
	}
	for name, patch := range valid {
		t.Run("valid/"+name, func(t *testing.T) {
			if err := CheckSettings(with(t, patch)); err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}

	invalid := map[string]struct{ patch, member, message string }{
		"a null group":           {`{"styling": null}`, "styling", "cannot be null"},
		"a null theme":           {`{"styling": {"theme": null}}`, "styling.theme", "cannot be null"},
		"a named color":          {`{"styling": {"primaryColor": {"light": "blue", "dark": "#000"}}}`, "styling.primaryColor.light", "must be a color"},
		"a four-digit color":     {`{"styling": {"dangerColor": {"light": "#fff", "dark": "#0000"}}}`, "styling.dangerColor.dark", "must be a color"},
		"a color without dark":   {`{"styling": {"infoColor": {"light": "#fff"}}}`, "styling.infoColor.dark", "is required"},
		"an unknown theme":       {`{"styling": {"theme": "neon"}}`, "styling.theme", `must be one of "clean", "muted", "bold", "gradient"`},
		"an unknown font":        {`{"styling": {"font": "Comic Sans"}}`, "styling.font", "must be one of"},
		"a font of another type": {`{"styling": {"monospaceFont": 12}}`, "styling.monospaceFont", "must be a font name or a font definition"},
		"a font with no faces": {`{"styling": {"font": {"id": "b", "custom": true, "fontFamily": "B", "fontFaces": []}}}`,
			"styling.font.fontFaces", "must have at least 1 items"},
		"a fractional weight": {`{"styling": {"font": {"id": "b", "custom": true, "fontFamily": "B",
			"fontFaces": [{"weight": 400.5, "sources": [{"url": "https://example.com/b.woff"}]}]}}}`,
			"styling.font.fontFaces[0].weight", "must be a whole number"},
		"a font from a data address": {`{"styling": {"font": {"id": "b", "custom": true, "fontFamily": "B",
			"fontFaces": [{"weight": 400, "sources": [{"url": "data:font/woff2;base64,AA"}]}]}}}`,
			"styling.font.fontFaces[0].sources[0].url", "must be an absolute http or https URL"},
		"an unknown locale":          {`{"internationalization": {"locale": "pt-BR"}}`, "internationalization.locale", "must be one of"},
		"a locale of another type":   {`{"internationalization": {"locale": 1}}`, "internationalization.locale", "expected a string, got a number"},
		"a one-letter title":         {`{"title": "A"}`, "title", "must be at least 2 characters"},
		"an unknown member":          {`{"colour": "red"}`, "colour", "is not a known member"},
		"an unknown nested member":   {`{"styling": {"shadow": "big"}}`, "styling.shadow", "is not a known member"},
		"a relative logo":            {`{"header": {"logo": {"light": "/logo.png", "dark": "/logo.png"}}}`, "header.logo.light", "must be an absolute http or https URL"},
		"a script link":              {`{"header": {"links": [{"title": "X", "to": {"kind": "url", "url": " JavaScript:alert(1)"}, "links": []}]}}`, "header.links[0].to.url", "must not be a javascript: address"},
		"a link of no kind":          {`{"footer": {"groups": [{"title": "G", "links": [{"title": "L", "to": {"page": "p"}}]}]}}`, "footer.groups[0].links[0].to.kind", "is required"},
		"a link of an unknown kind":  {`{"footer": {"groups": [{"title": "G", "links": [{"title": "L", "to": {"kind": "tweet"}}]}]}}`, "footer.groups[0].links[0].to.kind", "must be one of"},
		"a header item without to":   {`{"header": {"links": [{"title": "X", "links": []}]}}`, "header.links[0].to", "is required"},
		"a condition that assigns":   {`{"header": {"links": [{"title": "X", "to": null, "links": [], "condition": "visitor.claims.x = 1"}]}}`, "header.links[0].condition", "must not contain"},
		"a long link title":          {`{"footer": {"groups": [{"title": "G", "links": [{"title": "` + strings.Repeat("x", 65) + `", "to": {"kind": "user", "user": "u"}}]}]}}`, "footer.groups[0].links[0].title", "at most 64"},
		"a long copyright":           {`{"footer": {"copyright": "` + strings.Repeat("©", 301) + `"}}`, "footer.copyright", "at most 300"},
		"a short announcement":       {`{"announcement": {"enabled": true, "message": "!", "style": "info"}}`, "announcement.message", "at least 2"},
		"an empty favicon emoji":     {`{"favicon": {"emoji": ""}}`, "favicon.emoji", "must not be empty"},
		"a favicon of another shape": {`{"favicon": "🎉"}`, "favicon", "must be {icon: {light, dark}}, {emoji} or {}"},
		"a favicon icon and emoji":   {`{"favicon": {"emoji": "🎉", "icon": {"light": "https://e.com/a", "dark": "https://e.com/b"}}}`, "favicon.emoji", "is not a known member"},
		"a string for a switch":      {`{"pdf": {"enabled": "yes"}}`, "pdf.enabled", "expected a boolean, got a string"},
		"a null switch":              {`{"trademark": {"enabled": null}}`, "trademark.enabled", "cannot be null"},
		"an unknown AI mode":         {`{"ai": {"mode": "chat"}}`, "ai.mode", "must be one of"},
		"an unknown theme mode":      {`{"themes": {"default": "system"}}`, "themes.default", `must be one of "light", "dark"`},
	}
	for name, c := range invalid {
		t.Run("invalid/"+name, func(t *testing.T) {
			err := CheckSettings(with(t, c.patch))
			p, ok := err.(*Problem)
			if !ok {
				t.Fatalf("got %v, want a problem of %s", err, c.member)
			}
			if p.Member != c.member || !strings.Contains(p.Message, c.message) {
				t.Errorf("got %q, want %s: ...%s...", p.Error(), c.member, c.message)
			}
		})
	}
}

func TestCheckOverrides(t *testing.T) {
	valid := []string{
		`{}`,
		`{"title": "Variant", "styling": {"theme": "bold", "primaryColor": {"light": "#f00", "dark": "#0f0"}}}`,
		`{"title": null, "styling": {"theme": null, "sidebar": {"list": null}}, "favicon": null}`,
		`{"internationalization": {"locale": "fr"}, "pdf": {"enabled": null}, "header": {"links": null}}`,
		`{"footer": {"groups": null, "copyright": null}, "privacyPolicy": {"url": null}, "externalLinks": {"target": "blank"}}`,
	}
	for _, src := range valid {
		if err := CheckOverrides(decode(t, src)); err != nil {
			t.Errorf("%s: refused: %v", src, err)
		}
	}
	invalid := map[string]struct{ src, want string }{
		"a font":              {`{"styling": {"font": "Inter"}}`, "styling.font: is not a known member"},
		"insights":            {`{"insights": {"trackingCookie": false}}`, "insights: is not a known member"},
		"a group as null":     {`{"styling": null}`, "styling: cannot be null"},
		"a group with none":   {`{"internationalization": {}}`, "internationalization.locale: is required"},
		"a bad color":         {`{"styling": {"warningColor": {"light": "#ggg", "dark": "#000"}}}`, "styling.warningColor.light: must be a color"},
		"an announcement off": {`{"announcement": null}`, "announcement: cannot be null"},
	}
	for name, c := range invalid {
		err := CheckOverrides(decode(t, c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s", name, err, c.want)
		}
	}
}

// Overrides change member by member within groups; null removes one; a
// group left empty goes; a value (a color, the favicon) is replaced whole.
// The site space's settings are the site's with its overrides over them.
func TestOverrideAndMerge(t *testing.T) {
	site := with(t, `{"favicon": {"icon": {"light": "https://example.com/l.png", "dark": "https://example.com/d.png"}}}`)
	siteBefore := jsonOf(t, site)
	steps := []struct {
		change, overrides string
		// merged are members of the merged settings, by path.
		merged map[string]string
	}{
		{
			change:    `{"styling": {"theme": "bold", "primaryColor": {"light": "#f00", "dark": "#f00"}}, "favicon": {"emoji": "🎉"}}`,
			overrides: `{"styling": {"theme": "bold", "primaryColor": {"light": "#f00", "dark": "#f00"}}, "favicon": {"emoji": "🎉"}}`,
			merged: map[string]string{"styling.theme": `"bold"`, "styling.primaryColor": `{"dark":"#f00","light":"#f00"}`,
				"styling.corners": `"rounded"`, "favicon": `{"emoji":"🎉"}`, "pdf": `{"enabled":false}`},
		},
		{
			change:    `{"styling": {"theme": null, "sidebar": {"list": "pill"}}, "pdf": {"enabled": true}}`,
			overrides: `{"styling": {"primaryColor": {"light": "#f00", "dark": "#f00"}, "sidebar": {"list": "pill"}}, "favicon": {"emoji": "🎉"}, "pdf": {"enabled": true}}`,
			merged: map[string]string{"styling.theme": `"clean"`, "styling.primaryColor": `{"dark":"#f00","light":"#f00"}`,
				"styling.sidebar": `{"background":"default","list":"pill"}`, "pdf": `{"enabled":true}`},
		},
		{
			change:    `{"styling": {"primaryColor": null, "sidebar": {"list": null}}, "pdf": {"enabled": null}, "favicon": null}`,
			overrides: `{}`,
			merged: map[string]string{"styling.primaryColor": `{"dark":"#346DDB","light":"#346DDB"}`,
				"styling.sidebar": `{"background":"default","list":"default"}`, "favicon": jsonOf(t, site["favicon"]), "pdf": `{"enabled":false}`},
		},
	}
	var o map[string]any
	for i, step := range steps {
		change := decode(t, step.change)
		if err := CheckOverrides(change); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		o = Override(o, change)
		if got, want := jsonOf(t, o), jsonOf(t, decode(t, step.overrides)); got != want {
			t.Errorf("step %d: overrides %s, want %s", i, got, want)
		}
		merged := Merge(site, o)
		for path, want := range step.merged {
			var v any = merged
			for _, name := range strings.Split(path, ".") {
				v = v.(map[string]any)[name]
			}
			if got := jsonOf(t, v); got != want {
				t.Errorf("step %d: merged %s is %s, want %s", i, path, got, want)
			}
		}
		if err := CheckSettings(merged); err != nil {
			t.Errorf("step %d: the merged settings are not valid: %v", i, err)
		}
	}
	if jsonOf(t, site) != siteBefore {
		t.Error("Merge changed the site's settings")
	}
}

// jsonOf is v as JSON, to compare values whatever their Go types.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
