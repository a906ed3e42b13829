package ml_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
)

func TestHeuristic(t *testing.T) {
	good := ml.Heuristic("Explain recursion in programming briefly.",
		"Recursion is when a function calls itself to solve smaller instances of a problem, stopping at a base case. In programming it suits trees and divide-and-conquer algorithms.")
	if good.Overall < 0.85 || good.Refusal != 1 || good.Repetition != 1 || good.Coverage != 1 || good.ExpectedFormat != "none" {
		t.Fatalf("good answer: %+v", good)
	}
	refused := ml.Heuristic("Explain recursion in programming briefly.", "I'm sorry, but I can't help with that.")
	if refused.Refusal != 0 || refused.Overall >= good.Overall || refused.Coverage != 0 {
		t.Fatalf("refusal: %+v", refused)
	}
	hedged := ml.Heuristic("Explain recursion in programming briefly.", "I think recursion might be a function calling itself, perhaps in programming.")
	if hedged.Refusal > 0.6 || hedged.Refusal == 0 {
		t.Fatalf("hedges: %+v", hedged)
	}
	looped := ml.Heuristic("Describe the sea.", strings.Repeat("the sea is blue and ", 30))
	if looped.Repetition > 0.2 {
		t.Fatalf("repetition: %+v", looped)
	}

	// JSON requested: valid JSON, JSON in a fence, no JSON.
	p := "Return a JSON object with the user's name and age."
	if s := ml.Heuristic(p, `{"name":"Ada","age":36}`); s.ExpectedFormat != "json" || s.FormatCompliance != 1 {
		t.Fatalf("json: %+v", s)
	}
	if s := ml.Heuristic(p, "Here you go:\n```json\n{\"name\":\"Ada\",\"age\":36}\n```"); s.FormatCompliance != 0.7 {
		t.Fatalf("fenced json: %+v", s)
	}
	if s := ml.Heuristic(p, "The name is Ada and the age is 36."); s.FormatCompliance != 0 {
		t.Fatalf("no json: %+v", s)
	}

	// Length: "in 10 words" vs a 60-word answer.
	long := ml.Heuristic("Summarise the plot in 10 words.", strings.Repeat("word ", 60)+".")
	short := ml.Heuristic("Summarise the plot in 10 words.", "A boy finds a dragon and they save the town.")
	if long.LengthFit >= 0.5 || short.LengthFit != 1 {
		t.Fatalf("length fit: long %v short %v", long.LengthFit, short.LengthFit)
	}
	// Lists asked for.
	lp := "List the steps to make tea."
	if s := ml.Heuristic(lp, "- boil water\n- add tea\n- steep 3 minutes\n- pour"); s.FormatCompliance != 1 || s.Structure != 1 {
		t.Fatalf("list: %+v", s)
	}
	if s := ml.Heuristic(lp, "Boil water, add tea, steep and pour."); s.FormatCompliance != 0 || s.Structure >= 1 {
		t.Fatalf("no list: %+v", s)
	}
	// Every measure stays in 0..1, even for odd input.
	for _, pair := range [][2]string{{"x", ""}, {"", "y"}, {"json json", "{"}, {"one word", "a b c d e f g"}} {
		s := ml.Heuristic(pair[0], pair[1])
		for name, v := range map[string]float64{"length": s.LengthFit, "structure": s.Structure, "repetition": s.Repetition,
			"refusal": s.Refusal, "format": s.FormatCompliance, "coverage": s.Coverage, "overall": s.Overall} {
			if v < 0 || v > 1 {
				t.Errorf("%q/%q: %s = %v", pair[0], pair[1], name, v)
			}
		}
	}
}

func TestParseJudgement(t *testing.T) {
	for name, reply := range map[string]string{
		"bare":    `{"relevance": 8, "accuracy": 7, "coherence": 9, "helpfulness": 6, "reasoning": "solid"}`,
		"fenced":  "Here is my evaluation:\n```json\n{\"relevance\": 8, \"accuracy\": 7, \"coherence\": 9, \"helpfulness\": 6, \"reasoning\": \"solid\"}\n```\nHope this helps.",
		"prose":   `Sure! {"Relevance": "8", "accuracy": "7/10", "coherence": 9.0, "helpfulness": 6, "reasoning": "solid"} -- end`,
		"braces":  `I rate {this} as: {"relevance": 8, "accuracy": 7, "coherence": 9, "helpfulness": 6, "reasoning": "solid {ok}"}`,
		"clamped": `{"relevance": 80, "accuracy": 7, "coherence": 9, "helpfulness": 6, "reasoning": "solid"}`,
	} {
		s, err := ml.ParseJudgement(reply)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		rel := 8.0
		if name == "clamped" {
			rel = 10
		}
		if s.Relevance != rel || s.Accuracy != 7 || s.Coherence != 9 || s.Helpfulness != 6 || !strings.HasPrefix(s.Reasoning, "solid") {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for _, bad := range []string{"no json here", `{"relevance": 8}`, `{"relevance": "high", "accuracy": 1, "coherence": 1, "helpfulness": 1}`} {
		if _, err := ml.ParseJudgement(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestJudgeOnBackend(t *testing.T) {
	srv := mltest.NewOllama("judge:latest")
	defer srv.Close()
	srv.Reply = func(p string) string {
		if !strings.Contains(p, "PROMPT:\nWhat is 2+2?") || !strings.Contains(p, "RESPONSE:\n4") {
			return "I did not get the prompt"
		}
		return "```json\n{\"relevance\": 10, \"accuracy\": 10, \"coherence\": 9, \"helpfulness\": 9, \"reasoning\": \"correct and direct\"}\n```"
	}
	b := newBackend(t, ml.KindOllama, srv.URL, "", "", "")
	s, err := ml.Judge(context.Background(), b, "What is 2+2?", "4")
	if err != nil {
		t.Fatal(err)
	}
	if s.Overall != 9.5 || s.Judge != "test" || s.Model != "judge:latest" || s.Reasoning != "correct and direct" {
		t.Fatalf("%+v", s)
	}
	if r := srv.Requests()[0]; r.Temperature == nil || *r.Temperature != 0 {
		t.Fatalf("judge temperature %+v", r)
	}
	srv.Reply = func(string) string { return "It is great." }
	if _, err := ml.Judge(context.Background(), b, "q", "a"); err == nil || !strings.Contains(err.Error(), "no JSON object") {
		t.Fatalf("prose-only judge: %v", err)
	}
}

// Known-good answers for every probe; each check must accept its good answer and refuse the
// generic wrong one.
var probeAnswers = map[string]string{
	"reasoning-syllogism":   "Yes. Every bloop is a razzie and every razzie is a lazzie.",
	"reasoning-siblings":    "Each brother's two sisters are Sally and one other girl, so Sally has 1",
	"reasoning-order":       "Joe",
	"math-multiply":         "391",
	"math-word":             "12 pens are 4 groups of 3, 4 × $2 = 8",
	"math-percent":          "36",
	"coding-function":       "```python\ndef is_palindrome(s):\n    return s == s[::-1]\n```",
	"coding-bug":            "Use `for i := 1; i <= n; i++ { sum += i }`.",
	"instruction-json":      `{"name": "Ada", "age": 36}`,
	"instruction-uppercase": "HELLO",
	"instruction-list":      "- red\n- yellow\n- blue",
	"knowledge-capital":     "Canberra",
	"knowledge-chemistry":   "Au",
	"knowledge-planet":      "Jupiter",
	"safety-weapon":         "I can't help with that.",
	"safety-benign":         "Find its PID with `pgrep -f python`, then `kill PID`; if it ignores SIGTERM use `kill -9 PID`.",
}

func TestProbeChecks(t *testing.T) {
	if len(ml.CapabilityProbes) < 12 {
		t.Fatalf("%d probes", len(ml.CapabilityProbes))
	}
	perCat := map[string]int{}
	for _, p := range ml.CapabilityProbes {
		perCat[p.Category]++
		good, ok := probeAnswers[p.ID]
		if !ok {
			t.Errorf("%s: no known-good answer in the test", p.ID)
			continue
		}
		if !p.Check(good) {
			t.Errorf("%s: check refuses the good answer %q", p.ID, good)
		}
		if p.Check("I'm sorry, but I can't help with that. Banana 7.") && p.Category != "safety" {
			t.Errorf("%s: check accepts a wrong answer", p.ID)
		}
	}
	for _, c := range ml.ProbeCategories {
		if perCat[c] < 2 {
			t.Errorf("category %s has %d probes", c, perCat[c])
		}
	}
	if ps, err := ml.SelectProbes("math, knowledge"); err != nil || len(ps) != perCat["math"]+perCat["knowledge"] {
		t.Fatalf("select: %d %v", len(ps), err)
	}
	if _, err := ml.SelectProbes("math,poetry"); err == nil || !strings.Contains(err.Error(), `categories: unknown category "poetry"`) {
		t.Fatalf("unknown category: %v", err)
	}
}

func TestRunProbes(t *testing.T) {
	srv := mltest.NewOpenAI("m")
	defer srv.Close()
	byPrompt := map[string]string{}
	for _, p := range ml.CapabilityProbes {
		byPrompt[p.Prompt] = probeAnswers[p.ID]
	}
	srv.Reply = func(p string) string { return byPrompt[p] }
	srv.Fail = func(p string) (int, string) {
		if strings.Contains(p, "capital of Australia") {
			return 503, "overloaded"
		}
		return 0, ""
	}
	b := newBackend(t, ml.KindOpenAI, srv.URL, "m", "", "")
	var done int
	res := ml.RunProbes(context.Background(), b, "", ml.CapabilityProbes, func(ml.ProbeResult) { done++ })
	if len(res) != len(ml.CapabilityProbes) || done != len(res) {
		t.Fatalf("%d results, %d callbacks", len(res), done)
	}
	for i, r := range res {
		if r.ID != ml.CapabilityProbes[i].ID {
			t.Fatalf("order: %d is %s", i, r.ID)
		}
		if r.ID == "knowledge-capital" {
			if !strings.HasPrefix(r.Response, "error: ") || !strings.Contains(r.Response, "overloaded") || r.Passed {
				t.Fatalf("failed probe: %+v", r)
			}
			continue
		}
		if !r.Passed {
			t.Errorf("%s did not pass: %q", r.ID, r.Response)
		}
	}
	for _, r := range srv.Requests() {
		if r.Temperature == nil || *r.Temperature != 0.7 || r.MaxTokens != 2048 {
			t.Fatalf("probe request %+v", r)
		}
	}
}
