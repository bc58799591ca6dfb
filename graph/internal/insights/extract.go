package insights

import (
	"html"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Message is one message of a conversation.
type Message struct {
	// Role is who wrote it: user, assistant or team-member.
	Role string
	Body string
}

// Issue is a problem someone raised.
type Issue struct {
	Title   string
	Summary string
}

// MaxTitle bounds an issue title, in characters.
const MaxTitle = 120

// Extract is the built-in extractor: deterministic, no model. Each message
// of the user that holds sentences stating a problem or asking a question
// gives one issue: titled by its first such sentence, summarised by all of
// them. Messages of assistants and team members are not the user's problems.
// Identical issues within a conversation are kept once.
func Extract(messages []Message) []Issue {
	var out []Issue
	seen := map[string]bool{}
	for _, m := range messages {
		if m.Role != "user" {
			continue
		}
		var problems []string
		for _, s := range Sentences(PlainText(m.Body)) {
			if IsProblem(s) {
				problems = append(problems, s)
			}
		}
		if len(problems) == 0 {
			continue
		}
		issue := Issue{Title: truncate(problems[0], MaxTitle), Summary: strings.Join(problems, " ")}
		key := strings.ToLower(issue.Summary)
		if !seen[key] {
			seen[key] = true
			out = append(out, issue)
		}
	}
	return out
}

var (
	blockTagRE = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|h[1-6]|tr|td|blockquote|pre)\b[^>]*>`)
	tagRE      = regexp.MustCompile(`<[^>]*>`)
	mdMarkRE   = regexp.MustCompile("[*_`#>]+")
	mdLinkRE   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	spaceRE    = regexp.MustCompile(`\s+`)
	sentenceRE = regexp.MustCompile(`[^.!?\n]+[.!?]*`)
)

// PlainText strips HTML tags and markdown marks from a message body (bodies
// are markdown or HTML), keeping line breaks as sentence ends.
func PlainText(body string) string {
	s := blockTagRE.ReplaceAllString(body, "\n")
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = mdLinkRE.ReplaceAllString(s, "$1")
	return mdMarkRE.ReplaceAllString(s, "")
}

// Sentences splits text at sentence ends and line breaks.
func Sentences(text string) []string {
	var out []string
	for _, s := range sentenceRE.FindAllString(text, -1) {
		s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
		if len(Terms(s)) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// problemCues are words and phrases that mark a sentence stating a problem.
var problemCues = []string{
	"can't", "cannot", "can not", "couldn't", "could not", "unable", "won't", "doesn't", "does not", "don't",
	"isn't", "is not", "aren't", "didn't", "not working", "no longer", "error", "fail", "broken", "break",
	"crash", "bug", "issue", "problem", "wrong", "missing", "stuck", "slow", "timeout", "timed out",
	"confus", "unclear", "incorrect", "outdated", "lost", "denied", "refus", "reject", "invalid", "blank", "empty",
	"locked out", "is down", "went down", "twice", "duplicate", "no result", "nothing", "times out", "time out",
	"unrelated", "never", "stale", "stopped", "not secure", "stuck",
	"how do i", "how can i", "how to", "is there a way", "need help",
}

// IsProblem reports whether a sentence states a problem or asks a question.
func IsProblem(sentence string) bool {
	if strings.HasSuffix(sentence, "?") {
		return true
	}
	s := " " + strings.ToLower(strings.ReplaceAll(sentence, "’", "'")) + " "
	for _, cue := range problemCues {
		if strings.Contains(s, cue) {
			return true
		}
	}
	return false
}

// truncate shortens s to at most n characters, at a word boundary when it can.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
