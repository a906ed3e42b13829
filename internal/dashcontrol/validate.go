package dashcontrol

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

var (
	exportedName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	argName      = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
	wildcard     = regexp.MustCompile(`\{([^}]*)\}`)
)

// Validate checks every declaration: names, routes, where each argument travels and what the
// action template refers to. The errors name the control and say what to change.
func (t *Table[R]) Validate() error {
	var errs []error
	seen := map[string]bool{}
	routes := map[string][]Spec{}
	var order []string
	for _, c := range t.controls {
		s := c.Spec()
		if seen[s.Name] {
			errs = append(errs, fmt.Errorf("control %s: declared twice", s.Name))
		}
		seen[s.Name] = true
		for _, err := range s.validate() {
			errs = append(errs, fmt.Errorf("control %s: %w", s.Name, err))
		}
		if _, ok := routes[c.Route]; !ok {
			order = append(order, c.Route)
		}
		routes[c.Route] = append(routes[c.Route], s)
	}
	for _, route := range order {
		if err := validateShared(routes[route]); err != nil {
			errs = append(errs, fmt.Errorf("route %s: %w", route, err))
		}
	}
	return errors.Join(errs...)
}

func (s Spec) validate() []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !exportedName.MatchString(s.Name) {
		fail("name %q: want an exported Go method name such as SetTransport", s.Name)
	}
	if s.Doc == "" || !strings.HasSuffix(s.Doc, ".") || s.Doc[0] < 'a' || s.Doc[0] > 'z' {
		fail("doc %q: want a sentence that continues the name, in lower case, ending with a period (\"switches one transport on or off.\")", s.Doc)
	}
	switch s.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		fail("route: method %q: want GET, POST or DELETE (\"POST /api/transports/{name}\")", s.Method)
	}
	if !strings.HasPrefix(s.Path, "/api/") {
		fail("route: path %q: want one under /api/", s.Path)
	}
	if s.Result == nil {
		fail("no Call")
		return errs
	}
	wild := map[string]bool{}
	for _, m := range wildcard.FindAllStringSubmatch(s.Path, -1) {
		wild[m[1]] = true
	}
	names := map[string]Arg{}
	bodies, fields := 0, 0
	for _, a := range s.Args {
		if !argName.MatchString(a.Name) {
			fail("argument %q: want a lower camel name such as sessionId", a.Name)
		}
		if _, dup := names[a.Name]; dup {
			fail("argument %s: declared twice", a.Name)
		}
		names[a.Name] = a
		switch a.Source {
		case SourcePath:
			if !wild[a.Name] {
				fail("argument %s: the path %s has no {%s}", a.Name, s.Path, a.Name)
			}
			delete(wild, a.Name)
		case SourceBody:
			bodies++
		case SourceBodyField:
			fields++
		case SourceQuery:
			if a.Type.Kind() != reflect.Struct {
				fail("argument %s: a query argument is a struct whose fields are the parameters", a.Name)
			} else {
				for _, f := range JSONFields(a.Type) {
					if !isScalar(f.Type) {
						fail("argument %s: field %s is a %v; query parameters are strings, numbers or booleans", a.Name, f.Name, f.Type)
					}
				}
			}
		}
		if (a.Source == SourcePath || a.Source == SourceQueryParam) && !isScalar(a.Type) {
			fail("argument %s: a %v cannot travel in the URL; send it in the body", a.Name, a.Type)
		}
		if a.Required && a.Source != SourceBodyField {
			fail("argument %s: only a body field can be Required", a.Name)
		}
		if a.Default != nil && a.Source != SourceQueryParam {
			fail("argument %s: only a query parameter has a Default", a.Name)
		}
		if len(a.Values) > 0 && a.Type.Kind() != reflect.String {
			fail("argument %s: OneOf is for strings", a.Name)
		}
	}
	for w := range wild {
		fail("route: {%s} is not an argument (declare dashcontrol.Path[string](%q))", w, w)
	}
	if bodies > 1 || bodies == 1 && (fields > 0 || len(s.Fixed) > 0) {
		fail("a Body argument is the whole body: it cannot share it with other body arguments or Fixed fields")
	}
	if (bodies > 0 || fields > 0 || len(s.Fixed) > 0) && s.Method != http.MethodPost {
		fail("a %s request carries no body; use POST, or path and query arguments", s.Method)
	}
	for k, v := range s.Fixed {
		if _, clash := names[k]; clash {
			fail("fixed field %s: also an argument", k)
		}
		if v == nil || !isScalar(reflect.TypeOf(v)) {
			fail("fixed field %s: want a string, number or boolean", k)
		}
	}
	parts, err := ParseAction(s.Action)
	if err != nil {
		errs = append(errs, err)
	}
	if s.Action == "" {
		fail("action: want the label its errors start with, such as \"{enabled?enable:disable} {name}\"")
	}
	for _, p := range parts {
		if p.Arg == "" {
			continue
		}
		a, ok := names[p.Arg]
		if !ok {
			fail("action {%s}: no such argument", p.Arg)
			continue
		}
		if p.Field != "" && (a.Type.Kind() != reflect.Struct || !slices.ContainsFunc(JSONFields(a.Type), func(f JSONField) bool { return f.Name == p.Field })) {
			fail("action {%s.%s}: %v has no JSON field %q", p.Arg, p.Field, a.Type, p.Field)
		}
	}
	return errs
}

// validateShared checks controls that share a route: the same arguments, told apart by Fixed
// fields (the same keys, a different value each), none served by hand.
func validateShared(specs []Spec) error {
	if len(specs) < 2 {
		return nil
	}
	first := specs[0]
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	sharing := strings.Join(names, ", ")
	seen := map[string]string{}
	for _, s := range specs {
		if s.ServeByHand {
			return fmt.Errorf("%s is served by hand, so it cannot share its route", s.Name)
		}
		if !reflect.DeepEqual(s.Args, first.Args) {
			return fmt.Errorf("%s share it, so they must take the same arguments", sharing)
		}
		if len(s.Fixed) == 0 || !slices.Equal(sortedKeys(s.Fixed), sortedKeys(first.Fixed)) {
			return fmt.Errorf("%s share it: give each the same Fixed fields, with a different value each", sharing)
		}
		key := fmt.Sprint(s.Fixed)
		if other, dup := seen[key]; dup {
			return fmt.Errorf("%s and %s have the same Fixed values %s", other, s.Name, key)
		}
		seen[key] = s.Name
	}
	return nil
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
