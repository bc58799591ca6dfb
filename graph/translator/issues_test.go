package translator

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/docsapi/docsapi/graph/internal/insights"
)

// A loopback server speaking the chat-completions protocol answers with the
// issues it was told to; the client sends the conversation and reads them.
func TestOpenAIExtractIssues(t *testing.T) {
	answer := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" || len(req.Messages) != 2 ||
			!strings.Contains(req.Messages[1].Content, `"body":"I cannot log in."`) || !strings.Contains(req.Messages[1].Content, `"subject":"Login"`) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"content": answer}}}})
	}))
	defer srv.Close()
	p := &OpenAI{URL: srv.URL + "/v1", Model: "m"}
	messages := []insights.Message{{Role: "user", Body: "I cannot log in."}, {Role: "assistant", Body: "Try again."}}

	answer = "```json\n" + `{"issues": [{"title": " Cannot log in ", "summary": "The user cannot log in."}, {"title": "No summary"}, {"title": ""}]}` + "\n```"
	got, err := p.ExtractIssues(t.Context(), "Login", messages)
	want := []insights.Issue{{Title: "Cannot log in", Summary: "The user cannot log in."}, {Title: "No summary", Summary: "No summary"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ExtractIssues = %v, %v; want %v", got, err, want)
	}
	answer = `{"issues": []}`
	if got, err := p.ExtractIssues(t.Context(), "Login", messages); err != nil || len(got) != 0 {
		t.Errorf("no issue: %v, %v", got, err)
	}
	for _, bad := range []string{"Sure! The user cannot log in.", `{"problems": []}`} {
		answer = bad
		if _, err := p.ExtractIssues(t.Context(), "Login", messages); err == nil || !strings.Contains(err.Error(), `{"issues": [...]}`) {
			t.Errorf("answer %q: err %v", bad, err)
		}
	}
	if _, err := p.ExtractIssues(t.Context(), "Other", messages); err == nil || !strings.Contains(err.Error(), "answered 400") {
		t.Errorf("a refused request: %v", err)
	}
}
