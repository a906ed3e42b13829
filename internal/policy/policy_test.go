package policy

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func mustCompile(t *testing.T, c Config) *Policy {
	t.Helper()
	p, err := Compile(c, RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecideFirstMatchingRuleWins(t *testing.T) {
	p := mustCompile(t, Config{Default: "allow", Rules: []RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "process_*", Args: map[string]string{"command": "rm"}, Client: "*", Action: "ask"},
		{Tool: "process_start", Args: map[string]string{"args": "-rf /*"}, Action: "deny"},
		{Tool: "*", Client: "cursor*", Action: "ask"},
		{Tool: "file_*", Action: "allow"},
	}})
	cases := []struct {
		tool, client, args string
		want               Action
		rule               int
	}{
		{"file_delete", "claude", `{"path":"a"}`, Deny, 1},
		{"file_delete", "cursor", `{}`, Deny, 1}, // rule 1 precedes rule 4
		{"process_start", "claude", `{"command":"rm","args":["-rf","/"]}`, Ask, 2},
		{"process_start", "claude", `{"command":"ls","args":["-rf","/tmp"]}`, Deny, 3}, // list: space-joined
		{"process_start", "claude", `{"command":"ls","args":["-la"]}`, Allow, 0},
		{"process_start", "claude", `{"command":"ls"}`, Allow, 0},   // args glob needs the argument
		{"process_exec", "claude", `{"command":"rmdir"}`, Allow, 0}, // whole-string match
		{"file_read", "cursor-1.2", `{"path":"x"}`, Ask, 4},
		{"file_read", "claude", `{"path":"x"}`, Allow, 5},
		{"dir_list", "claude", `not json`, Allow, 0},
	}
	for _, c := range cases {
		d := p.Decide(c.tool, c.client, json.RawMessage(c.args))
		got := 0
		if d.Rule != nil {
			got = d.Rule.Index
		}
		if d.Action != c.want || got != c.rule {
			t.Errorf("Decide(%s, %s, %s) = %s by rule %d, want %s by rule %d", c.tool, c.client, c.args, d.Action, got, c.want, c.rule)
		}
	}
	if n := p.Decide("process_start", "c", json.RawMessage(`{"command":"rm"}`)).RuleName(); !strings.Contains(n, `rule 2 (tool="process_*" args.command="rm"`) {
		t.Errorf("RuleName = %s", n)
	}
	if n := p.Decide("x", "c", nil).RuleName(); n != "default policy (allow)" {
		t.Errorf("default RuleName = %s", n)
	}
}

func TestDecideArgumentKinds(t *testing.T) {
	p := mustCompile(t, Config{Default: "deny", Rules: []RuleSpec{
		{Tool: "t", Args: map[string]string{"n": "4?", "b": "true"}, Action: "allow"},
	}})
	if a := p.Decide("t", "", json.RawMessage(`{"n":42,"b":true}`)).Action; a != Allow {
		t.Errorf("number and bool: %s", a)
	}
	for _, args := range []string{`{"n":{"x":1},"b":true}`, `{"n":null,"b":true}`, `{"n":[1,{}],"b":true}`, `{"b":true}`} {
		if a := p.Decide("t", "", json.RawMessage(args)).Action; a != Deny {
			t.Errorf("%s: %s, want deny (objects, null and absent never match)", args, a)
		}
	}
}

func TestCompileErrorsNameTheKey(t *testing.T) {
	_, err := Compile(Config{Default: "maybe", AskTimeout: "soon", Rules: []RuleSpec{
		{Tool: "", Action: "deny"},
		{Tool: "x[", Action: "allow"},
		{Tool: "y", Args: map[string]string{"p": "a\\"}, Action: "permit"},
		{Tool: "z"},
	}}, RootsConfig{Allow: []string{"relative/dir"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"policy.default", "policy.ask_timeout", "policy.rules[1].tool: required", "policy.rules[2].tool", "policy.rules[3].args.p", "policy.rules[3].action", "policy.rules[4].action: required", "roots.allow[1]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestGlob(t *testing.T) {
	cases := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*", "rm -rf /", true}, {"rm *", "rm -rf /", true}, {"rm", "rm -rf", false},
		{"file_*", "file_read", true}, {"file_*", "dir_list", false}, {"?", "é", true}, {"??", "é", false},
		{"[a-c]x", "bx", true}, {"[!a-c]x", "bx", false}, {"[^a-c]x", "dx", true}, {`\*`, "*", true}, {`\*`, "a", false},
		{"a*b*c", "aXXbYYc", true}, {"a*b*c", "aXXbYY", false}, {"**", "x", true}, {"[]]", "]", true}, {"[a-]", "-", true},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := g.match(c.s); got != c.want {
			t.Errorf("glob %q match %q = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

// globRegexp is an independent reference: the same pattern language translated to a regexp.
func globRegexp(g glob) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for _, it := range g.items {
		switch it.kind {
		case gLit:
			b.WriteString(regexp.QuoteMeta(string(it.r)))
		case gAny:
			b.WriteString(`.`)
		case gStar:
			b.WriteString(`.*`)
		case gClass:
			b.WriteByte('[')
			if it.negate {
				b.WriteByte('^')
			}
			for _, r := range it.ranges {
				b.WriteString(regexp.QuoteMeta(string(r.lo)))
				if r.hi != r.lo {
					b.WriteByte('-')
					b.WriteString(regexp.QuoteMeta(string(r.hi)))
				}
			}
			b.WriteByte(']')
		}
	}
	b.WriteString(`)$`)
	return regexp.MustCompile(b.String())
}

// FuzzRules feeds arbitrary rule text and arguments to the parser and matcher: nothing may
// panic, a compiled glob must agree with its regexp translation, and Decide must be the first
// matching rule.
func FuzzRules(f *testing.F) {
	f.Add("file_*", "rm *", "claude*", `{"command":"rm -rf /","args":["a","b"]}`, "file_delete")
	f.Add("[a-z]?x", `\*`, "", `{"command":"*"}`, "abx")
	f.Add("[!", "]", "[", `[]`, "")
	f.Add("*a*a*a*a*a*b", "*", "*", `{"command":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]}`, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac")
	f.Add("é?", "[é-ü]", "\\", `{"command":42}`, "éa")
	f.Fuzz(func(t *testing.T, toolPat, argPat, clientPat, args, tool string) {
		p, err := Compile(Config{Rules: []RuleSpec{
			{Tool: toolPat, Args: map[string]string{"command": argPat}, Client: clientPat, Action: "deny"},
			{Tool: toolPat, Action: "ask"},
		}}, RootsConfig{})
		if err != nil {
			return
		}
		d := p.Decide(tool, "claude", json.RawMessage(args))
		tg := p.Rules[1].tool
		if want := globRegexp(tg).MatchString(tool); tg.match(tool) != want && utf8Valid(tool) {
			t.Fatalf("glob %q on %q: match=%v, regexp=%v", toolPat, tool, !want, want)
		}
		if !tg.match(tool) && d.Rule != nil {
			t.Fatalf("rule matched although the tool glob does not: %+v", d)
		}
		if tg.match(tool) && (d.Rule == nil || d.Action == Allow) {
			t.Fatalf("tool glob matches but decision is %+v", d)
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestStoreApplyKeepsLastGood(t *testing.T) {
	p, err := Compile(Config{Rules: []RuleSpec{{Tool: "file_delete", Action: "deny"}}}, RootsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore("/etc/switchboard.toml", p)
	var changes []Status
	s.Subscribe(func(st Status) { changes = append(changes, st) })
	if err := s.Apply(nil, errors.New("config x: policy.rules[1].action: bad")); err == nil {
		t.Fatal("Apply returned no error for a file that did not load")
	}
	if len(changes) != 1 || !strings.Contains(changes[0].Error, "policy.rules[1].action") || !strings.Contains(changes[0].Error, "previous policy stays") {
		t.Fatalf("changes = %+v", changes)
	}
	if d := s.Policy().Decide("file_delete", "", nil); d.Action != Deny {
		t.Fatalf("after a file that did not load the last good policy must stay: %+v", d)
	}
	next, err := Compile(Config{Default: "deny", AskTimeout: "3s"}, RootsConfig{Allow: []string{"/srv"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(next, nil); err != nil {
		t.Fatal(err)
	}
	st := s.Status()
	if st.Error != "" || st.Default != Deny || st.AskTimeout != "3s" || st.Rules != 0 || len(st.RootsAllow) != 1 || len(changes) != 2 {
		t.Errorf("status = %+v, %d changes", st, len(changes))
	}
}

func TestBrokerAnswersTimeoutAndCancel(t *testing.T) {
	b := NewBroker()
	added := make(chan Approval, 4)
	b.Subscribe(func(c ApprovalChange) {
		if c.Kind == "added" {
			added <- c.Approval
		}
	})
	done := make(chan Outcome, 1)
	go func() {
		done <- b.Ask(context.Background(), Approval{Kind: KindCall, Tool: "file_delete"}, time.Minute, nil)
	}()
	a := <-added
	if l := b.Pending(); len(l) != 1 || l[0].ID != a.ID || l[0].Tool != "file_delete" {
		t.Fatalf("pending = %+v", l)
	}
	if err := b.Decide("nope", true, ByDashboard); err == nil {
		t.Error("unknown id accepted")
	}
	if err := b.Decide(a.ID, true, ByDashboard); err != nil {
		t.Fatal(err)
	}
	if o := <-done; !o.Approved || o.By != ByDashboard || o.Result() != "approved" {
		t.Errorf("outcome = %+v", o)
	}
	if err := b.Decide(a.ID, false, ByDashboard); err == nil {
		t.Error("answered twice")
	}

	ticks := 0
	o := b.Ask(context.Background(), Approval{Kind: KindCall, Tool: "x"}, 1200*time.Millisecond, func(time.Duration) { ticks++ })
	<-added
	if o.Approved || o.Result() != "timed out" || !strings.Contains(o.Reason, "1.2s") || ticks < 1 {
		t.Errorf("timeout outcome = %+v, ticks %d", o, ticks)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-added; cancel() }()
	if o := b.Ask(ctx, Approval{Kind: KindCall}, time.Minute, nil); o.Approved || o.Result() != "dismissed" || !o.Dismissed {
		t.Errorf("cancelled outcome = %+v", o)
	}
	if l := b.Pending(); len(l) != 0 {
		t.Errorf("left pending: %+v", l)
	}
}

// TestBrokerUnattendedAndWithdrawn: a question nobody can answer fails within UnattendedWait,
// not ask_timeout; one that a dashboard can answer waits; a session's questions are withdrawn
// when it ends, and a late answer finds nothing.
func TestBrokerUnattendedAndWithdrawn(t *testing.T) {
	b := NewBroker()
	start := time.Now()
	o := b.Ask(context.Background(), Approval{Kind: KindCall, Tool: "x"}, time.Minute, nil)
	if took := time.Since(start); o.Approved || o.By != ByNobody || !o.Dismissed || o.Result() != "unanswerable" || took > UnattendedWait+2*time.Second {
		t.Errorf("unattended outcome = %+v after %s", o, took)
	}

	var present atomic.Bool
	remove := b.AddPresence(present.Load)
	defer remove()
	added := make(chan Approval, 4)
	b.Subscribe(func(c ApprovalChange) {
		if c.Kind == "added" {
			added <- c.Approval
		}
	})
	// Someone opens the dashboard while the question waits: it waits for their answer.
	done := make(chan Outcome, 1)
	go func() { done <- b.Ask(context.Background(), Approval{Kind: KindCall, Session: "s1"}, time.Minute, nil) }()
	a := <-added
	present.Store(true)
	select {
	case o := <-done:
		t.Fatalf("gave up although a dashboard opened: %+v", o)
	case <-time.After(UnattendedWait + time.Second):
	}
	b.Withdraw("other", "withdrawn")
	if len(b.Pending()) != 1 {
		t.Fatal("another session's withdrawal took this question")
	}
	b.Withdraw("s1", "withdrawn: the client disconnected")
	if o := <-done; o.Approved || !o.Dismissed || !strings.Contains(o.Reason, "disconnected") {
		t.Errorf("withdrawn outcome = %+v", o)
	}
	if err := b.Decide(a.ID, true, ByDashboard); !errors.Is(err, ErrUnknownApproval) {
		t.Errorf("a withdrawn question could still be approved: %v", err)
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize(json.RawMessage(`{"path":"a.txt","content":"0123456789","args":["-rf","/"]}`))
	want := "args: [\"-rf\",\"/\"]\ncontent: <10 bytes>\npath: a.txt"
	if got != want {
		t.Errorf("Summarize = %q, want %q", got, want)
	}
	if Summarize(nil) != "(no arguments)" {
		t.Error("empty")
	}
	// secrets (package redact) never show, at any depth; a script is shown to the person deciding
	got = Summarize(json.RawMessage(`{"api_key":"sk-1","env":["GITHUB_TOKEN=ghp-2","HOME=/h"],"opts":{"password":"p-3"},"script":"rm x","data":{"a":1}}`))
	want = "api_key: <redacted>\ndata: <7 bytes of JSON>\nenv: [\"GITHUB_TOKEN=<redacted>\",\"HOME=/h\"]\nopts: {\"password\":\"<redacted>\"}\nscript: rm x"
	if got != want {
		t.Errorf("Summarize = %q, want %q", got, want)
	}
}

func TestRootDir(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	if got, err := RootDir("file://" + dir); err != nil || got != real {
		t.Errorf("RootDir = %q, %v", got, err)
	}
	for _, bad := range []string{"https://example.com/x", "file://other-host/tmp", "file:///does/not/exist", "file://" + filepath.Join(dir, "nope")} {
		if _, err := RootDir(bad); err == nil {
			t.Errorf("RootDir(%q) accepted", bad)
		}
	}
}

// BenchmarkDecide is one decision against 20 rules where only the default matches.
func BenchmarkDecide(b *testing.B) {
	var specs []RuleSpec
	for i := range 10 {
		specs = append(specs, RuleSpec{Tool: "tool_" + string(rune('a'+i)) + "*", Action: "deny"},
			RuleSpec{Tool: "file_*", Args: map[string]string{"path": "secret-" + string(rune('a'+i)) + "/*"}, Action: "ask"})
	}
	p, err := Compile(Config{Rules: specs}, RootsConfig{})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"path":"src/main.go","content":"package main"}`)
	b.ReportAllocs()
	for b.Loop() {
		if d := p.Decide("file_write", "claude-code", args); d.Action != Allow {
			b.Fatal(d)
		}
	}
}

// The broker uses only channels and timers, so the test runs in a synctest bubble: once every
// Ask is blocked waiting for its answer (synctest.Wait), all of them are pending.
func TestBrokerRefusesBeyondMaxPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewBroker()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var wg sync.WaitGroup
		for range MaxPending {
			wg.Go(func() { b.Ask(ctx, Approval{Kind: KindCall}, time.Minute, nil) })
		}
		synctest.Wait()
		if n := len(b.Pending()); n != MaxPending {
			t.Fatalf("%d pending, want %d", n, MaxPending)
		}
		o := b.Ask(ctx, Approval{Kind: KindCall}, time.Minute, nil)
		if o.Approved || !strings.Contains(o.Reason, "already waiting") {
			t.Errorf("over the cap: %+v", o)
		}
		cancel()
		wg.Wait()
	})
}

func TestAutoGrant(t *testing.T) {
	p, err := Compile(Config{}, RootsConfig{Allow: []string{"/srv/shared"}})
	if err != nil {
		t.Fatal(err)
	}
	g := Grounds{Workspace: "/home/u/hubws", Relay: "/opt/proj", Home: "/home/u",
		HubState: []string{"/home/u/.config/switchboard", "/var/lib/sbdata"}}
	cases := []struct {
		dir  string
		ok   bool
		want string
	}{
		{"/home/u/hubws", true, "hub's workspace"},
		{"/home/u/hubws/sub", true, "hub's workspace"},
		{"/srv/shared/x", true, "[roots] allow"},
		{"/opt/proj", true, "started in"},
		{"/opt/proj/pkg", true, "started in"},
		{"/home/u/src/app", true, "project directory"},
		{"/home/u", false, "home directory or above"},
		{"/home", false, "home directory or above"},
		{"/", false, "home directory or above"},
		{"/home/u/.ssh", false, "~/.ssh"},
		{"/home/u/.aws/sub", false, "~/.aws"},
		{"/home/u/.config", false, "~/.config"},
		{"/var/lib/sbdata/rag", false, "hub's own state"},
		{"/var/lib", false, "hub's own state"},
		{"/tmp/x", false, "outside your home"},
		{"/home/u2/src", false, "outside your home"},
		{"/home/uu/src", false, "outside your home"},
		{"/opt/proj-evil", false, "outside your home"},
		{"/home/u/src/.hidden", true, "project directory"},
	}
	for _, c := range cases {
		why, ok := p.AutoGrant(c.dir, g)
		if ok != c.ok || !strings.Contains(why, c.want) {
			t.Errorf("AutoGrant(%s) = %q, %v; want %v and %q", c.dir, why, ok, c.ok, c.want)
		}
	}
	// A relay started in the home directory, or in /, grants nothing by itself.
	for _, relay := range []string{"/home/u", "/"} {
		g := Grounds{Relay: relay, Home: "/home/u"}
		if why, ok := p.AutoGrant("/etc", g); ok {
			t.Errorf("relay %s granted /etc: %s", relay, why)
		}
		if Protected(relay, g) == "" {
			t.Errorf("relay directory %s is not protected", relay)
		}
	}
}

// TestBrokerShortTimeoutIsATimeout: an ask_timeout no longer than UnattendedWait runs out as a
// timeout even with nobody there — the two rules never race.
func TestBrokerShortTimeoutIsATimeout(t *testing.T) {
	b := NewBroker()
	o := b.Ask(context.Background(), Approval{Kind: KindCall, Tool: "x"}, UnattendedWait, nil)
	if o.By != ByTimeout || o.Result() != "timed out" {
		t.Errorf("outcome = %+v, want a timeout", o)
	}
}

// TestRulesOnRewrittenToolsAreWarned: a rule naming servers_call (the hub decides each such call
// as the server tool it names) compiles — the file stays loadable — but is reported as never
// matching, with the rule's key and what to write instead; a rule naming servers_search (an
// ordinary tool), a glob that also matches other tools, or a server tool is not; the store's
// status carries the warnings of the policy in force.
func TestRulesOnRewrittenToolsAreWarned(t *testing.T) {
	p := mustCompile(t, Config{Rules: []RuleSpec{
		{Tool: "file_delete", Action: "deny"},
		{Tool: "servers_call", Action: "deny"},
		{Tool: "servers_search", Action: "ask"},
		{Tool: "servers_*", Action: "ask"},
		{Tool: `servers\_call`, Args: map[string]string{"name": "github__*"}, Client: "cursor", Action: "ask"},
		{Tool: "github__create_issue", Action: "ask"},
		{Tool: "servers_cal?", Action: "deny"},
	}})
	if len(p.Warnings) != 2 {
		t.Fatalf("warnings: %q", p.Warnings)
	}
	for i, rule := range []string{"policy.rules[2].tool", "policy.rules[5].tool"} {
		w := p.Warnings[i]
		if !strings.HasPrefix(w, rule+": ") || !strings.Contains(w, "never matches") || !strings.Contains(w, `"<server>__<tool>"`) {
			t.Errorf("warning %d: %s", i, w)
		}
	}
	// The rule is still compiled and still decides a call of that name (policy check shows it);
	// the hub simply never asks.
	if d := p.Decide("servers_call", "", nil); d.Rule == nil || d.Rule.Index != 2 {
		t.Errorf("decide servers_call: %v", d.RuleName())
	}
	if _, ok := Rewritten("servers_search"); ok {
		t.Error("servers_search is an ordinary tool, decided by its name")
	}
	if got := RewrittenTools(); len(got) != 2 || got[0] != "servers_call" || got[1] != "tools_call" {
		t.Errorf("RewrittenTools() = %v", got)
	}

	s := NewStore("", p)
	if st := s.Status(); len(st.Warnings) != 2 {
		t.Errorf("status warnings: %q", st.Warnings)
	}
	s.Status().Warnings[0] = "changed by a caller"
	if s.Status().Warnings[0] == "changed by a caller" {
		t.Error("Status shares its warnings with the store")
	}
	s.Apply(mustCompile(t, Config{Rules: []RuleSpec{{Tool: "github__*", Action: "ask"}}}), nil)
	if st := s.Status(); len(st.Warnings) != 0 {
		t.Errorf("warnings after a clean reload: %q", st.Warnings)
	}
	s.Apply(p, nil)
	s.Apply(nil, errors.New("broken file"))
	if st := s.Status(); len(st.Warnings) != 2 || st.Error == "" {
		t.Errorf("a refused file keeps the warnings of the policy in force: %+v", st)
	}
}

// TestStoreAnnouncesOnlyChanges: applying the same policy again (a save read back by the file
// watcher) is not announced — the hub logged each reload twice — while a change, and an error, is.
func TestStoreAnnouncesOnlyChanges(t *testing.T) {
	compile := func(action string) *Policy {
		p, err := Compile(Config{Rules: []RuleSpec{{Tool: "exec", Action: action}}}, RootsConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	s := NewStore("", compile("deny"))
	var got []Status
	defer s.Subscribe(func(st Status) { got = append(got, st) })()
	if err := s.Apply(compile("deny"), nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("the same policy again was announced: %+v", got)
	}
	if err := s.Apply(compile("ask"), nil); err != nil || len(got) != 1 {
		t.Fatalf("a changed rule: %v, %d announcements", err, len(got))
	}
	if err := s.Apply(nil, errors.New("line 3: bad")); err == nil || len(got) != 2 || got[1].Error == "" {
		t.Fatalf("a broken file: %v, %+v", err, got)
	}
	if err := s.Apply(compile("ask"), nil); err != nil || len(got) != 3 || got[2].Error != "" {
		t.Fatalf("the file fixed (same rules as before the error) is announced: %v, %+v", err, got)
	}
}
