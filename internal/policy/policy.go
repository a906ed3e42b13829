// Package policy decides whether a tool call may run: allow, ask the user, or deny.
//
// Rules come from the [policy] section of the config file. The first rule whose tool, client
// and argument globs all match decides; when none matches, the default action does. The package
// is MCP-agnostic: the hub's middleware (mcp/trust/policy.go) feeds it the tool name, the client's
// name and the raw JSON arguments, and turns the Decision into a tool error or a question.
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Action is what a rule (or the default) does with a call.
type Action string

// The three actions.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// DefaultAskTimeout is how long a question waits for an answer when ask_timeout is not set.
const DefaultAskTimeout = 120 * time.Second

// Config is the [policy] section of the config file, as written. Compile checks it.
type Config struct {
	Default    string     `toml:"default"`     // allow | ask | deny; empty = allow
	AskTimeout string     `toml:"ask_timeout"` // Go duration, e.g. "120s"; empty = 120s
	Rules      []RuleSpec `toml:"rules"`
}

// RuleSpec is one [[policy.rules]] entry.
type RuleSpec struct {
	Tool   string            `toml:"tool"`   // glob over tool names; required
	Args   map[string]string `toml:"args"`   // argument name → glob over its value
	Client string            `toml:"client"` // glob over clientInfo.name; empty = any
	Action string            `toml:"action"` // allow | ask | deny; required
}

// RootsConfig is the [roots] section: directories whose MCP roots are granted without asking.
type RootsConfig struct {
	Allow []string `toml:"allow"`
}

// Rule is a compiled rule.
type Rule struct {
	name   string // String(), built once at Compile
	Index  int    // 1-based position in the file
	Spec   RuleSpec
	tool   glob
	client glob
	args   []argGlob // sorted by name
	Action Action
}

type argGlob struct {
	name string
	g    glob
}

// String names the rule the way errors and the audit log show it:
// `rule 2 (tool="exec" args.command="rm*" client="*" → ask)`.
func (r *Rule) String() string {
	if r.name != "" {
		return r.name
	}
	return r.describe()
}

func (r *Rule) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rule %d (tool=%q", r.Index, r.Spec.Tool)
	for _, a := range r.args {
		fmt.Fprintf(&b, " args.%s=%q", a.name, a.g.src)
	}
	if r.Spec.Client != "" {
		fmt.Fprintf(&b, " client=%q", r.Spec.Client)
	}
	fmt.Fprintf(&b, " → %s)", r.Action)
	return b.String()
}

// Policy is a compiled, immutable rule set. The zero value is not usable; use Compile or Open.
type Policy struct {
	Default    Action
	AskTimeout time.Duration
	Rules      []*Rule
	RootsAllow []string // absolute, cleaned directories
	// Warnings name the rules that compile but can never match (a rule naming servers_call, see
	// Rewritten), each with what to write instead. They do not stop the policy: `switchboard
	// policy check`, the hub's log and the Settings view show them.
	Warnings []string
}

// rewritten maps the tool names the policy never sees to what a rule should name instead: the
// hub turns a call of one into a call of another tool before the policy decides, so a rule that
// names one never matches. servers_call (mcp.ToolServersCall) is rewritten into the server tool
// it names, tools_call (the search and script tools modes) into any tool it names (mcp/modes.go);
// servers_search and tools_search are ordinary tools and are decided by their names. The one
// list of such names: the hub's test ties it to the rewrite.
var rewritten = map[string]string{
	"servers_call": `name the server's tool as "<server>__<tool>" instead (e.g. "github__create_issue", or "github__*" for every tool of that server)`,
	"tools_call":   `name the tool it calls instead (e.g. "file_write", or "github__create_issue" for a server's tool)`,
}

// Rewritten reports whether a call named tool reaches the policy under another name (the tool
// it stands for), and if so what a rule should name instead.
func Rewritten(tool string) (instead string, ok bool) {
	instead, ok = rewritten[tool]
	return instead, ok
}

// RewrittenTools lists the names Rewritten knows, sorted.
func RewrittenTools() []string {
	out := make([]string, 0, len(rewritten))
	for n := range rewritten {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// AllowAll is the policy of a hub without a [policy] section.
func AllowAll() *Policy { return &Policy{Default: Allow, AskTimeout: DefaultAskTimeout} }

func parseAction(s, field string) (Action, error) {
	switch Action(strings.ToLower(strings.TrimSpace(s))) {
	case Allow:
		return Allow, nil
	case Ask:
		return Ask, nil
	case Deny:
		return Deny, nil
	}
	return "", fmt.Errorf("%s: %q is not an action; use \"allow\", \"ask\" or \"deny\"", field, s)
}

// Compile checks a [policy] section and turns it into a Policy. Errors name the key at fault
// (`policy.rules[2].action: ...`) and say what would be valid.
func Compile(c Config, roots RootsConfig) (*Policy, error) {
	p := &Policy{Default: Allow, AskTimeout: DefaultAskTimeout}
	var errs []error
	if c.Default != "" {
		a, err := parseAction(c.Default, "policy.default")
		if err != nil {
			errs = append(errs, err)
		}
		p.Default = a
	}
	if c.AskTimeout != "" {
		d, err := time.ParseDuration(c.AskTimeout)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("policy.ask_timeout: %q is not a duration; write it like \"120s\" or \"2m\"", c.AskTimeout))
		case d <= 0:
			errs = append(errs, fmt.Errorf("policy.ask_timeout: %q must be positive", c.AskTimeout))
		default:
			p.AskTimeout = d
		}
	}
	for i, spec := range c.Rules {
		field := fmt.Sprintf("policy.rules[%d]", i+1)
		r := &Rule{Index: i + 1, Spec: spec}
		var err error
		if strings.TrimSpace(spec.Tool) == "" {
			errs = append(errs, fmt.Errorf("%s.tool: required; a glob over tool names such as \"file_*\" or \"*\"", field))
		} else if r.tool, err = compileGlob(spec.Tool); err != nil {
			errs = append(errs, fmt.Errorf("%s.tool: %w", field, err))
		}
		client := spec.Client
		if client == "" {
			client = "*"
		}
		if r.client, err = compileGlob(client); err != nil {
			errs = append(errs, fmt.Errorf("%s.client: %w", field, err))
		}
		names := make([]string, 0, len(spec.Args))
		for k := range spec.Args {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if k == "" {
				errs = append(errs, fmt.Errorf("%s.args: an argument name is empty", field))
				continue
			}
			g, err := compileGlob(spec.Args[k])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.args.%s: %w", field, k, err))
				continue
			}
			r.args = append(r.args, argGlob{name: k, g: g})
		}
		if spec.Action == "" {
			errs = append(errs, fmt.Errorf("%s.action: required; use \"allow\", \"ask\" or \"deny\"", field))
		} else if r.Action, err = parseAction(spec.Action, field+".action"); err != nil {
			errs = append(errs, err)
		}
		r.name = r.describe()
		p.Rules = append(p.Rules, r)
		// A rule on a name the policy never sees compiles but never matches: silently useless
		// (a deny that denies nothing), so it is reported, not refused (the file stays loadable).
		if name, ok := r.tool.literal(); ok {
			if instead, ok := Rewritten(name); ok {
				p.Warnings = append(p.Warnings, fmt.Sprintf("%s.tool: %q never matches: a %s call is decided as the tool it calls, never by this name; %s",
					field, spec.Tool, name, instead))
			}
		}
	}
	for i, dir := range roots.Allow {
		clean, err := cleanDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("roots.allow[%d]: %w", i+1, err))
			continue
		}
		p.RootsAllow = append(p.RootsAllow, clean)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// Decision is the outcome of Decide.
type Decision struct {
	Action Action
	Rule   *Rule // nil when the default decided
}

// RuleName is how the decision's source is shown: the rule, or "default policy (allow)".
func (d Decision) RuleName() string {
	if d.Rule == nil {
		switch d.Action { // constants: this runs on every call
		case Allow:
			return "default policy (allow)"
		case Ask:
			return "default policy (ask)"
		case Deny:
			return "default policy (deny)"
		}
		return fmt.Sprintf("default policy (%s)", d.Action)
	}
	return d.Rule.String()
}

// Decide returns the action for a call: the first rule whose globs all match, else the default.
// args is the call's raw JSON arguments (an object, or empty). A rule with an args glob matches
// only when that argument is present: strings match as they are, lists of strings space-joined,
// numbers and booleans as their JSON text; objects never match.
func (p *Policy) Decide(tool, client string, args json.RawMessage) Decision {
	return p.DecideMembers(tool, client, func() map[string]json.RawMessage {
		var vals map[string]json.RawMessage
		if len(args) > 0 {
			_ = json.Unmarshal(args, &vals) // not an object: no argument glob can match
		}
		return vals
	})
}

// DecideMembers is Decide for a caller that already holds the arguments' top-level members, or
// decodes them once for several uses: members is called at most once, and only when a rule
// that could match tests an argument.
func (p *Policy) DecideMembers(tool, client string, members func() map[string]json.RawMessage) Decision {
	var vals map[string]json.RawMessage
	var cache map[string]argVal // each argument rendered once per call, however many rules test it
	parsed := false
	for _, r := range p.Rules {
		if !r.tool.match(tool) || !r.client.match(client) {
			continue
		}
		if len(r.args) > 0 && !parsed {
			parsed = true
			vals = members()
			cache = make(map[string]argVal, len(vals))
		}
		ok := true
		for _, a := range r.args {
			v, seen := cache[a.name]
			if !seen {
				v.s, v.present = argString(vals[a.name])
				cache[a.name] = v
			}
			if !v.present || !a.g.match(v.s) {
				ok = false
				break
			}
		}
		if ok {
			return Decision{Action: r.Action, Rule: r}
		}
	}
	return Decision{Action: p.Default}
}

type argVal struct {
	s       string
	present bool
}

// argString renders one argument for matching. present is false for absent values, null and
// objects.
func argString(raw json.RawMessage) (s string, present bool) {
	if len(raw) == 0 {
		return "", false
	}
	// Fast path: a plain JSON string without escapes is its own text.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && bytes.IndexByte(raw[1:n-1], '"') < 0 {
		return string(raw[1 : n-1]), true
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strings.TrimSpace(string(raw)), true
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch y := e.(type) {
			case string:
				parts = append(parts, y)
			case bool:
				parts = append(parts, strconv.FormatBool(y))
			case float64:
				parts = append(parts, strconv.FormatFloat(y, 'g', -1, 64))
			default:
				return "", false
			}
		}
		return strings.Join(parts, " "), true
	}
	return "", false
}

// ArgNames lists the argument names the rules that apply to tool and client match on, without
// duplicates (nil when no such rule tests an argument). The hub canonicalises just those
// arguments before Decide, so a path rule sees one spelling of a path.
func (p *Policy) ArgNames(tool, client string) []string {
	var names []string
	for _, r := range p.Rules {
		if len(r.args) == 0 || !r.tool.match(tool) || !r.client.match(client) {
			continue
		}
		for _, a := range r.args {
			if !slices.Contains(names, a.name) {
				names = append(names, a.name)
			}
		}
	}
	return names
}
