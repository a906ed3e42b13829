package dashcontrol

import (
	"fmt"
	"strings"
)

// ActionPart is one piece of a control's Action template.
type ActionPart struct {
	// Text is literal text (when Arg is "").
	Text string
	// Arg is the argument whose value ({arg}), field ({arg.field}) or choice ({arg?then:else}) this is.
	Arg string
	// Field is the JSON field of {arg.field}.
	Field string
	// Choice marks {arg?then:else}: Then when the argument is true, non-empty or a non-empty list, else Else.
	Choice     bool
	Then, Else string
}

// ParseAction splits an Action template into its parts.
func ParseAction(s string) ([]ActionPart, error) {
	var parts []ActionPart
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			parts = append(parts, ActionPart{Text: s})
			break
		}
		if open > 0 {
			parts = append(parts, ActionPart{Text: s[:open]})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("action %q: a { without its }", s)
		}
		ref := s[open+1 : open+end]
		s = s[open+end+1:]
		var p ActionPart
		if name, choice, ok := strings.Cut(ref, "?"); ok {
			then, els, ok := strings.Cut(choice, ":")
			if !ok {
				return nil, fmt.Errorf("action {%s}: a choice is {arg?then:else}", ref)
			}
			p = ActionPart{Arg: name, Choice: true, Then: then, Else: els}
		} else {
			name, field, _ := strings.Cut(ref, ".")
			p = ActionPart{Arg: name, Field: field}
		}
		if !isIdent(p.Arg) || (p.Field != "" && !isIdent(p.Field)) {
			return nil, fmt.Errorf("action {%s}: want {arg}, {arg.field} or {arg?then:else}", ref)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
