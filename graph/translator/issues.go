package translator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/docsapi/docsapi/graph/internal/insights"
)

// IssueExtractor finds the problems a user raised in a conversation. The
// configured provider does it when it can (OpenAI does); otherwise the
// conversation insights use the built-in extractor (insights.Extract).
type IssueExtractor interface {
	ExtractIssues(ctx context.Context, subject string, messages []insights.Message) ([]insights.Issue, error)
	Name() string
}

var _ IssueExtractor = (*OpenAI)(nil)

// ExtractIssues asks the model for a JSON object {"issues": [{title,
// summary}]}: one per distinct problem or question the user raised.
func (p *OpenAI) ExtractIssues(ctx context.Context, subject string, messages []insights.Message) ([]insights.Issue, error) {
	type message struct {
		Role string `json:"role"`
		Body string `json:"body"`
	}
	conv := struct {
		Subject  string    `json:"subject"`
		Messages []message `json:"messages"`
	}{Subject: subject, Messages: []message{}}
	for _, m := range messages {
		conv.Messages = append(conv.Messages, message{m.Role, m.Body})
	}
	user, err := json.Marshal(conv)
	if err != nil {
		return nil, err
	}
	const system = `You read support conversations about a documentation product.
You receive a JSON object {"subject": "...", "messages": [{"role": "user|assistant|team-member", "body": "..."}]}.
List each distinct problem or question the user (role "user") raised; ignore what assistants and team members say.
Answer with only a JSON object {"issues": [{"title": "...", "summary": "..."}]}: a title of at most 100 characters
and a one or two sentence summary per issue, in the conversation's language; {"issues": []} when there is none.`
	content, err := p.complete(ctx, "issue extraction provider", system, string(user))
	if err != nil {
		return nil, err
	}
	var answer struct {
		Issues []struct {
			Title   string `json:"title"`
			Summary string `json:"summary"`
		} `json:"issues"`
	}
	if err := json.Unmarshal([]byte(content), &answer); err != nil || answer.Issues == nil {
		return nil, errors.New(`issue extraction provider: the model did not answer {"issues": [...]}`)
	}
	out := make([]insights.Issue, 0, len(answer.Issues))
	for _, i := range answer.Issues {
		title, summary := strings.TrimSpace(i.Title), strings.TrimSpace(i.Summary)
		if title == "" {
			continue
		}
		if summary == "" {
			summary = title
		}
		out = append(out, insights.Issue{Title: title, Summary: summary})
	}
	return out, nil
}
