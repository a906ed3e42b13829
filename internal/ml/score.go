package ml

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// HeuristicScores are measures that need no model, each in 0..1 where 1 is best.
type HeuristicScores struct {
	// LengthFit: 1 when the word count fits what the prompt asks for ("in 50 words", "briefly",
	// "one word", "in detail"; otherwise 5–400 words), falling off proportionally outside.
	LengthFit float64 `json:"length_fit"`
	// Structure: complete sentences (ends with terminal punctuation, not cut off), paragraphs or
	// lists for long answers, and a list when the prompt asks for steps, bullets or a list.
	Structure float64 `json:"structure"`
	// Repetition: 1 minus the share of repeated word trigrams (1 = nothing repeated).
	Repetition float64 `json:"repetition"`
	// Refusal: 1 with no refusal or hedging markers; a refusal ("I can't help with") scores 0,
	// each hedge ("I think", "might", "as an AI") takes off 0.15.
	Refusal float64 `json:"refusal"`
	// FormatCompliance: does the answer have the format the prompt asks for — valid JSON (0.7 if
	// valid only inside a code fence or surrounding prose), a code block, a list, yes/no, a
	// single word, a number; 1 when the prompt asks for no particular format.
	FormatCompliance float64 `json:"format_compliance"`
	// Coverage: share of the prompt's key terms (words of 4+ letters that are not stop words)
	// that the answer mentions.
	Coverage float64 `json:"coverage"`
	// Overall: weighted mean (format 0.25, refusal 0.2, coverage 0.15, repetition 0.15,
	// length 0.15, structure 0.1).
	Overall float64 `json:"overall"`
	// ExpectedFormat is the format detected in the prompt: json, code, list, yes_no, one_word,
	// number or none.
	ExpectedFormat string `json:"expected_format"`
	// Words is the answer's word count.
	Words int `json:"words"`
}

var (
	reNWords     = regexp.MustCompile(`(?i)\b(?:in|under|within|at most|no more than|about|exactly)\s+(\d+)\s+words?\b`)
	reNSentences = regexp.MustCompile(`(?i)\b(?:in|under|within|at most|no more than|exactly)\s+(\d+|one|two|three|four|five)\s+sentences?\b`)
	reWord       = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'_-]*`)
	reListLine   = regexp.MustCompile(`(?m)^\s*(?:[-*•]|\d+[.)])\s+\S`)
	reFence      = regexp.MustCompile("(?s)```[a-zA-Z0-9_+-]*\\s*\\n?(.*?)```")
)

var refusalMarkers = []string{
	"i can't help", "i cannot help", "i can't assist", "i cannot assist", "i won't", "i will not",
	"i'm unable to", "i am unable to", "i'm not able to", "i am not able to", "i can't provide",
	"i cannot provide", "i must decline", "i'm sorry, but i", "i apologize, but i", "i can't do that",
	"i cannot do that", "not able to comply", "can't comply", "cannot comply",
}

var hedgeMarkers = []string{
	"as an ai", "as a language model", "i think", "i believe", "it seems", "might be", "may be",
	"possibly", "perhaps", "not sure", "i'm not certain", "i am not certain", "it depends",
	"it's hard to say", "it is hard to say", "generally speaking", "to some extent",
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against also among another answer because been before
		being below between both could describe does doing down during each either every explain from further
		give have having here into itself just like make many more most much must need only other ought ours
		over please provide same shall should show some such tell than that their theirs them then there these
		they this those through under until upon very want well were what when where which while will with
		within without would write your yours using used words sentence sentences word list briefly detail
		following example short long answer respond reply return only format`) {
		stopWords[w] = true
	}
}

// Heuristic scores a response against its prompt without any model.
func Heuristic(prompt, response string) HeuristicScores {
	lp := strings.ToLower(prompt)
	words := reWord.FindAllString(response, -1)
	s := HeuristicScores{Words: len(words), ExpectedFormat: expectedFormat(lp)}
	s.LengthFit = lengthFit(lp, len(words), response)
	s.Structure = structure(lp, response, len(words))
	s.Repetition = repetition(words)
	s.Refusal = refusal(strings.ToLower(response))
	s.FormatCompliance = formatCompliance(s.ExpectedFormat, response, words)
	s.Coverage = coverage(prompt, strings.ToLower(response))
	s.Overall = round3(0.25*s.FormatCompliance + 0.2*s.Refusal + 0.15*s.Coverage + 0.15*s.Repetition +
		0.15*s.LengthFit + 0.1*s.Structure)
	s.LengthFit, s.Structure, s.Repetition = round3(s.LengthFit), round3(s.Structure), round3(s.Repetition)
	s.Refusal, s.FormatCompliance, s.Coverage = round3(s.Refusal), round3(s.FormatCompliance), round3(s.Coverage)
	return s
}

func round3(v float64) float64 { return math.Round(clamp01(v)*1000) / 1000 }

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

func expectedFormat(lp string) string {
	switch {
	case strings.Contains(lp, "json"):
		return "json"
	case containsAny(lp, "write a function", "write code", "code snippet", "implement a", "write a program", "in python", "in go ", "in javascript", "in rust"):
		return "code"
	case containsAny(lp, "one word", "single word"):
		return "one_word"
	case containsAny(lp, "yes or no", "yes/no"):
		return "yes_no"
	case containsAny(lp, "only the number", "just the number", "answer with a number", "only a number"):
		return "number"
	case containsAny(lp, "bullet", "list ", "steps", "step by step", "enumerate"):
		return "list"
	}
	return "none"
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// rangeFit is 1 inside [lo, hi] and falls off proportionally outside.
func rangeFit(n, lo, hi float64) float64 {
	switch {
	case n < lo:
		return n / lo
	case n > hi:
		return hi / n
	}
	return 1
}

func lengthFit(lp string, n int, response string) float64 {
	if strings.TrimSpace(response) == "" {
		return 0
	}
	f := float64(n)
	if m := reNWords.FindStringSubmatch(lp); m != nil {
		t, _ := strconv.Atoi(m[1])
		if t > 0 {
			return rangeFit(f, float64(t)*0.5, float64(t)*1.3)
		}
	}
	if m := reNSentences.FindStringSubmatch(lp); m != nil {
		t := map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}[m[1]]
		if t == 0 {
			t, _ = strconv.Atoi(m[1])
		}
		if t > 0 {
			return rangeFit(f, 3, float64(t)*35)
		}
	}
	switch {
	case containsAny(lp, "one word", "single word"):
		return rangeFit(f, 1, 3)
	case containsAny(lp, "yes or no", "only the number", "just the number", "only a number"):
		return rangeFit(f, 1, 15)
	case containsAny(lp, "briefly", "short answer", "concise", "in brief", "tl;dr"):
		return rangeFit(f, 3, 120)
	case containsAny(lp, "in detail", "detailed", "comprehensive", "thorough", "essay"):
		return rangeFit(f, 150, 2000)
	}
	return rangeFit(f, 5, 400)
}

func structure(lp, response string, n int) float64 {
	t := strings.TrimSpace(response)
	if t == "" {
		return 0
	}
	score := 1.0
	last, _ := lastRune(t)
	if !strings.ContainsRune(".!?`)]}\"'*", last) && !unicode.IsDigit(last) && n > 12 {
		score -= 0.3 // looks cut off mid-sentence
	}
	lists := len(reListLine.FindAllString(t, -1))
	paragraphs := len(strings.Split(strings.ReplaceAll(t, "\r\n", "\n"), "\n\n"))
	if n > 150 && paragraphs < 2 && lists == 0 && !strings.Contains(t, "```") {
		score -= 0.3 // a wall of text
	}
	if containsAny(lp, "bullet", "list ", "steps", "step by step", "enumerate") && lists < 2 {
		score -= 0.4
	}
	return clamp01(score)
}

func lastRune(s string) (rune, bool) {
	r := []rune(s)
	if len(r) == 0 {
		return 0, false
	}
	return r[len(r)-1], true
}

func repetition(words []string) float64 {
	if len(words) < 6 {
		return 1
	}
	seen := map[string]int{}
	repeated := 0
	for i := 0; i+3 <= len(words); i++ {
		k := strings.ToLower(words[i] + " " + words[i+1] + " " + words[i+2])
		seen[k]++
		if seen[k] > 1 {
			repeated++
		}
	}
	return 1 - float64(repeated)/float64(len(words)-2)
}

func refusal(lr string) float64 {
	lr = strings.ReplaceAll(lr, "’", "'")
	if containsAny(lr, refusalMarkers...) {
		return 0
	}
	score := 1.0
	for _, h := range hedgeMarkers {
		if strings.Contains(lr, h) {
			score -= 0.15
		}
	}
	return clamp01(score)
}

func formatCompliance(format, response string, words []string) float64 {
	t := strings.TrimSpace(response)
	switch format {
	case "json":
		if json.Valid([]byte(t)) {
			return 1
		}
		if _, ok := ExtractJSON(t); ok {
			return 0.7
		}
		return 0
	case "code":
		if strings.Contains(t, "```") {
			return 1
		}
		if containsAny(t, "func ", "def ", "function ", "return ", "{\n", "=>", "fn ") {
			return 0.7
		}
		return 0
	case "one_word":
		return rangeFit(float64(len(words)), 1, 1)
	case "yes_no":
		if len(words) > 0 {
			if w := strings.ToLower(words[0]); w == "yes" || w == "no" {
				return 1
			}
		}
		lt := strings.ToLower(t)
		if strings.Contains(lt, "yes") || strings.Contains(lt, "no") {
			return 0.5
		}
		return 0
	case "number":
		if _, err := strconv.ParseFloat(strings.TrimRight(t, "."), 64); err == nil {
			return 1
		}
		if regexp.MustCompile(`-?\d+(\.\d+)?`).MatchString(t) {
			return 0.5
		}
		return 0
	case "list":
		if n := len(reListLine.FindAllString(t, -1)); n >= 2 {
			return 1
		} else if n == 1 {
			return 0.5
		}
		return 0
	}
	return 1
}

// KeyTerms are the prompt's content words (4+ letters, not stop words), lower-cased, in order.
func KeyTerms(prompt string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range reWord.FindAllString(strings.ToLower(prompt), -1) {
		if len([]rune(w)) < 4 || stopWords[w] || seen[w] {
			continue
		}
		if _, err := strconv.Atoi(w); err == nil {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func coverage(prompt, lr string) float64 {
	terms := KeyTerms(prompt)
	if len(terms) == 0 {
		return 1
	}
	hit := 0
	for _, t := range terms {
		stem := t
		if r := []rune(t); len(r) > 6 {
			stem = string(r[:len(r)-2]) // "recursion" matches "recursive"
		}
		if strings.Contains(lr, stem) {
			hit++
		}
	}
	return float64(hit) / float64(len(terms))
}

// ExtractJSON finds a JSON object in text: the whole text, a ```json fenced block, or the first
// balanced {...} in prose. It returns the object's bytes.
func ExtractJSON(text string) ([]byte, bool) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return []byte(t), true
	}
	for _, m := range reFence.FindAllStringSubmatch(t, -1) {
		if c := strings.TrimSpace(m[1]); json.Valid([]byte(c)) {
			return []byte(c), true
		}
	}
	for start := strings.IndexByte(t, '{'); start >= 0; {
		if end := balancedEnd(t[start:]); end > 0 && json.Valid([]byte(t[start:start+end])) {
			return []byte(t[start : start+end]), true
		}
		next := strings.IndexByte(t[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, false
}

// balancedEnd returns the length of the balanced {...} at the start of s (strings respected), or 0.
func balancedEnd(s string) int {
	depth, inStr, esc := 0, false, false
	for i, c := range s {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}

// SemanticScores are an LLM judge's ratings, each 1–10.
type SemanticScores struct {
	Relevance   float64 `json:"relevance"`
	Accuracy    float64 `json:"accuracy"`
	Coherence   float64 `json:"coherence"`
	Helpfulness float64 `json:"helpfulness"`
	Overall     float64 `json:"overall"` // mean of the four
	Reasoning   string  `json:"reasoning"`
	Judge       string  `json:"judge"` // backend that judged
	Model       string  `json:"model"` // its model
}

// JudgePrompt is what the judge is asked.
func JudgePrompt(prompt, response string) string {
	return "You are a strict evaluator of AI assistant answers. Rate the RESPONSE to the PROMPT on four " +
		"criteria, each an integer from 1 (very poor) to 10 (excellent): relevance (does it address the " +
		"prompt), accuracy (is it factually and logically correct), coherence (is it clear and well " +
		"organised), helpfulness (would it help the person who asked). Reply with only a JSON object of " +
		"this shape and nothing else:\n" +
		`{"relevance": 0, "accuracy": 0, "coherence": 0, "helpfulness": 0, "reasoning": "one or two sentences"}` +
		"\n\nPROMPT:\n" + prompt + "\n\nRESPONSE:\n" + response + "\n"
}

// ParseJudgement reads the judge's reply: a JSON object on its own, in a code fence, or inside
// prose; scores may be numbers or numeric strings ("8", "8/10") and are clamped to 1..10.
func ParseJudgement(reply string) (SemanticScores, error) {
	raw, ok := ExtractJSON(reply)
	if !ok {
		return SemanticScores{}, fmt.Errorf("the judge's reply has no JSON object: %.200q", reply)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return SemanticScores{}, fmt.Errorf("the judge's JSON is not an object: %w", err)
	}
	lower := map[string]any{}
	for k, v := range m {
		lower[strings.ToLower(strings.TrimSpace(k))] = v
	}
	var s SemanticScores
	var missing []string
	for _, f := range []struct {
		key string
		dst *float64
	}{{"relevance", &s.Relevance}, {"accuracy", &s.Accuracy}, {"coherence", &s.Coherence}, {"helpfulness", &s.Helpfulness}} {
		v, ok := scoreValue(lower[f.key])
		if !ok {
			missing = append(missing, f.key)
			continue
		}
		*f.dst = math.Max(1, math.Min(10, v))
	}
	if len(missing) > 0 {
		return SemanticScores{}, fmt.Errorf("the judge's JSON lacks numeric %s: %.200s", strings.Join(missing, ", "), raw)
	}
	if r, ok := lower["reasoning"].(string); ok {
		s.Reasoning = r
	}
	s.Overall = math.Round((s.Relevance+s.Accuracy+s.Coherence+s.Helpfulness)/4*100) / 100
	return s, nil
}

func scoreValue(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		x = strings.TrimSpace(x)
		if i := strings.IndexByte(x, '/'); i > 0 {
			x = strings.TrimSpace(x[:i])
		}
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// Judge asks backend b to rate a response. The judge runs at temperature 0.
func Judge(ctx context.Context, b *Backend, prompt, response string) (SemanticScores, error) {
	if b == nil {
		return SemanticScores{}, errors.New("suites: semantic needs a judge backend and none is configured; set OLLAMA_HOST, OPENAI_BASE_URL or [[ml.backends]] with [ml] judge_backend")
	}
	zero := 0.0
	res, err := b.Generate(ctx, Request{Prompt: JudgePrompt(prompt, response), Temperature: &zero, MaxTokens: 512})
	if err != nil {
		return SemanticScores{}, fmt.Errorf("suites: semantic judge %s failed: %w", b.Name, err)
	}
	s, err := ParseJudgement(res.Text)
	if err != nil {
		return SemanticScores{}, fmt.Errorf("suites: semantic judge %s: %w", b.Name, err)
	}
	s.Judge, s.Model = b.Name, res.Model
	return s, nil
}
