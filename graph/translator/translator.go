// Package translator translates documentation: a Provider turns texts from
// one language into another, and Segments/Apply confine a translation of
// markdown to its prose.
package translator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Request is one batch of texts to translate.
type Request struct {
	// From and To are language codes (en, fr, pt-br...).
	From, To string
	// Instructions are the organization's own guidance (tone, glossary).
	Instructions string
	Texts        []string
}

// Provider translates texts. It answers one translation per text, in order,
// or an error: never the texts themselves as a stand-in.
type Provider interface {
	Translate(ctx context.Context, req Request) ([]string, error)
	// Name says which engine translated, for status messages and logs.
	Name() string
}

// OpenAI speaks the chat-completions protocol of OpenAI and of the many
// servers compatible with it (vLLM, Ollama, LiteLLM, Azure OpenAI...).
type OpenAI struct {
	// URL is the API base, such as https://api.openai.com/v1; requests go to
	// URL + "/chat/completions".
	URL    string
	Model  string
	APIKey string
	// Client sends the requests (default: a client with a 2-minute limit).
	Client *http.Client
}

// Name is the model and the host it runs on.
func (p *OpenAI) Name() string { return p.Model + " at " + p.URL }

// maxResponseBytes bounds a provider's answer.
const maxResponseBytes = 8 << 20

// Translate asks the model for a JSON object {"translations": [...]}, one
// string per text, and checks that it got exactly that.
func (p *OpenAI) Translate(ctx context.Context, req Request) ([]string, error) {
	if len(req.Texts) == 0 {
		return []string{}, nil
	}
	texts, err := json.Marshal(map[string][]string{"texts": req.Texts})
	if err != nil {
		return nil, err
	}
	system := fmt.Sprintf(`You translate technical documentation from the language %q to the language %q.
You receive a JSON object {"texts": [...]} of text fragments from markdown documents.
Answer with only a JSON object {"translations": [...]} holding exactly one translation per fragment, in the same order.
Translate prose only: keep names of products, code identifiers, URLs and placeholders as they are; do not add markdown.`, req.From, req.To)
	if strings.TrimSpace(req.Instructions) != "" {
		system += "\nThe organization's instructions:\n" + req.Instructions
	}
	content, err := p.complete(ctx, "translation provider", system, string(texts))
	if err != nil {
		return nil, err
	}
	var answer struct {
		Translations []string `json:"translations"`
	}
	if err := json.Unmarshal([]byte(content), &answer); err != nil {
		return nil, errors.New(`translation provider: the model did not answer {"translations": [...]}`)
	}
	if len(answer.Translations) != len(req.Texts) {
		return nil, fmt.Errorf("translation provider: %d translations for %d texts", len(answer.Translations), len(req.Texts))
	}
	return answer.Translations, nil
}

// complete sends one chat completion (a system and a user message) and
// returns the model's answer, unfenced. what names the caller in errors.
func (p *OpenAI) complete(ctx context.Context, what, system, user string) (string, error) {
	body, err := json.Marshal(map[string]any{
		"model":       p.Model,
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": system},
			{"role": "user", "content": user},
		},
	})
	if err != nil {
		return "", err
	}
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.URL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	if p.APIKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+p.APIKey)
	}
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	resp, err := client.Do(httpReq)
	if err != nil {
		return "", fmt.Errorf("%s unreachable: %w", what, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return "", fmt.Errorf("%s: reading the answer: %w", what, err)
	}
	if len(raw) > maxResponseBytes {
		return "", fmt.Errorf("%s: the answer is too large", what)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %d", what, resp.StatusCode)
	}
	var completion struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &completion); err != nil || len(completion.Choices) == 0 {
		return "", fmt.Errorf("%s: not a chat completion", what)
	}
	return unfence(completion.Choices[0].Message.Content), nil
}

// unfence takes a ```json fence off a model's answer.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}
