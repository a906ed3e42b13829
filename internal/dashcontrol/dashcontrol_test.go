package dashcontrol

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// lamp is a receiver for a small table: what the controls did, so a test sees the arguments
// the HTTP decoding passed.
type lamp struct{ calls []string }

type colour struct {
	Name  string `json:"name"`
	Level int    `json:"level"`
}

type filter struct {
	Room  string `json:"room"`
	Limit int    `json:"limit"`
	Lit   bool   `json:"lit"`
}

func (l *lamp) record(format string, a ...any) (string, error) {
	s := fmt.Sprintf(format, a...)
	l.calls = append(l.calls, s)
	return s, nil
}

var lampTable = NewTable(
	Control[*lamp]{
		Name: "Switch", Route: "POST /api/lamps/{name}", Action: "{on?light:dim} {name}",
		Doc: "switches a lamp.",
		Call: Call2(Path[string]("name"), BodyField[bool]("on").Required(), func(l *lamp, name string, on bool) (string, error) {
			return l.record("switch %s %v", name, on)
		}),
	},
	Control[*lamp]{
		Name: "Paint", Route: "POST /api/lamps/{name}/colour", Action: "paint {name} {c.name}",
		Doc: "paints a lamp.",
		Call: Call2(Path[string]("name"), Body[colour]("c"), func(l *lamp, name string, c colour) (string, error) {
			return l.record("paint %s %s %d", name, c.Name, c.Level)
		}),
	},
	Control[*lamp]{
		Name: "Log", Route: "GET /api/lamps/{name}/log", Action: "log of {name}",
		Doc: "reads a lamp's log.",
		Call: Call2(Path[string]("name"), QueryParam[int]("lines").Default(50), func(l *lamp, name string, lines int) (string, error) {
			return l.record("log %s %d", name, lines)
		}),
	},
	Control[*lamp]{
		Name: "Find", Route: "GET /api/lamps", Action: "find lamps",
		Doc: "lists lamps.",
		Call: Call1(Query[filter]("f"), func(l *lamp, f filter) (string, error) {
			return l.record("find %+v", f)
		}),
	},
	Control[*lamp]{
		Name: "Preview", Route: "POST /api/lamps/{name}/plan", Action: "preview {name}",
		Doc: "shows a plan.", Fixed: map[string]any{"dryRun": true},
		Call: Call2(Path[string]("name"), BodyField[[]string]("steps"), func(l *lamp, name string, steps []string) (string, error) {
			return l.record("preview %s %v", name, steps)
		}),
	},
	Control[*lamp]{
		Name: "Apply", Route: "POST /api/lamps/{name}/plan", Action: "apply {name}",
		Doc: "runs a plan.", Fixed: map[string]any{"dryRun": false},
		Call: Call2(Path[string]("name"), BodyField[[]string]("steps"), func(l *lamp, name string, steps []string) (string, error) {
			return l.record("apply %s %v", name, steps)
		}),
	},
	Control[*lamp]{
		Name: "Broken", Route: "POST /api/lamps/broken", Action: "break",
		Doc:  "fails.",
		Call: Call0(func(*lamp) (string, error) { return "", errors.New("fuse: blown") }),
	},
	Control[*lamp]{
		Name: "Count", Route: "GET /api/count", Action: "count", ServeByHand: true,
		Doc:  "counts.",
		Call: Call0(NoError(func(l *lamp) int { return len(l.calls) })),
	},
)

// serve runs the table's routes on a real HTTP server; answers are JSON {"ok": …} or {"error": …}.
func serve(t *testing.T, l *lamp) string {
	t.Helper()
	mux := http.NewServeMux()
	for _, rt := range lampTable.Routes() {
		mux.HandleFunc(rt.Pattern, func(w http.ResponseWriter, r *http.Request) {
			v, err := rt.Serve(l, r)
			w.Header().Set("Content-Type", "application/json")
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"ok": v})
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTableIsValid(t *testing.T) {
	if err := lampTable.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestServeDecodesAsDeclared(t *testing.T) {
	l := &lamp{}
	base := serve(t, l)
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string // the answer's ok, or a part of its error
	}{
		{"path and body field", "POST", "/api/lamps/desk", `{"on": true}`, 200, "switch desk true"},
		{"false is not absent", "POST", "/api/lamps/desk", `{"on": false}`, 200, "switch desk false"},
		{"required field absent", "POST", "/api/lamps/desk", `{}`, 400, `on: required; want {"on": true|false}`},
		{"required field null", "POST", "/api/lamps/desk", `{"on": null}`, 400, "on: required"},
		{"field of the wrong type", "POST", "/api/lamps/desk", `{"on": "yes"}`, 400, "on: want true|false (json: cannot unmarshal string"},
		{"invalid JSON", "POST", "/api/lamps/desk", `[`, 400, "body: invalid JSON: "},
		{"no body", "POST", "/api/lamps/desk", ``, 400, "body: invalid JSON: "},
		{"not an object", "POST", "/api/lamps/desk", `[true]`, 400, `body: want a JSON object, {"on": true|false}`},
		{"whole body", "POST", "/api/lamps/desk/colour", `{"name": "red", "level": 3}`, 200, "paint desk red 3"},
		{"whole body of the wrong shape", "POST", "/api/lamps/desk/colour", `{"level": "high"}`, 400, `body: invalid JSON: json: cannot unmarshal string into Go struct field colour.level of type int; want {"name": "…", "level": 0}`},
		{"query default", "GET", "/api/lamps/desk/log", ``, 200, "log desk 50"},
		{"query value", "GET", "/api/lamps/desk/log?lines=0", ``, 200, "log desk 0"},
		{"query not a number", "GET", "/api/lamps/desk/log?lines=lots", ``, 400, `lines: "lots" is not a number`},
		{"query struct", "GET", "/api/lamps?room=hall&limit=2&lit=true&other=x", ``, 200, "find {Room:hall Limit:2 Lit:true}"},
		{"query struct, none set", "GET", "/api/lamps", ``, 200, "find {Room: Limit:0 Lit:false}"},
		{"query struct field", "GET", "/api/lamps?lit=maybe", ``, 400, `lit: "maybe" is not true or false`},
		{"fixed true", "POST", "/api/lamps/desk/plan", `{"dryRun": true, "steps": ["a"]}`, 200, "preview desk [a]"},
		{"fixed false", "POST", "/api/lamps/desk/plan", `{"dryRun": false}`, 200, "apply desk []"},
		{"fixed absent is its zero value", "POST", "/api/lamps/desk/plan", `{"steps": ["b"]}`, 200, "apply desk [b]"},
		{"fixed of the wrong type", "POST", "/api/lamps/desk/plan", `{"dryRun": "yes"}`, 400, "dryRun: want true|false"},
		{"the control's error", "POST", "/api/lamps/broken", ``, 400, "fuse: blown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			var out struct {
				OK    any    `json:"ok"`
				Error string `json:"error"`
			}
			json.Unmarshal(b, &out)
			got := fmt.Sprint(out.OK)
			if tc.code != 200 {
				got = out.Error
			}
			if res.StatusCode != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("%s %s %s: %d %s; want %d with %q", tc.method, tc.path, tc.body, res.StatusCode, b, tc.code, tc.want)
			}
		})
	}
	// A route served by hand is left to the caller.
	if res, err := http.Get(base + "/api/count"); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /api/count: %v %v; want 404 (ServeByHand)", res.StatusCode, err)
	}
}

func TestInvoke(t *testing.T) {
	l := &lamp{}
	got, err := Invoke[string](lampTable, l, "Switch", "desk", true)
	if err != nil || got != "switch desk true" {
		t.Fatalf("Invoke Switch = %q, %v", got, err)
	}
	if n, err := Invoke[int](lampTable, l, "Count"); err != nil || n != 1 {
		t.Errorf("Invoke Count = %d, %v; want 1 (served by hand, still invoked from the table)", n, err)
	}
	if _, err := Invoke[string](lampTable, l, "Broken"); err == nil || err.Error() != "fuse: blown" {
		t.Errorf("Invoke Broken: %v", err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"unknown", func() error { _, err := Invoke[string](lampTable, l, "Dance"); return err }, "control Dance: not in the control table"},
		{"arity", func() error { _, err := Invoke[string](lampTable, l, "Switch", "desk"); return err }, "called with 1 arguments, declared with 2"},
		{"argument type", func() error { _, err := Invoke[string](lampTable, l, "Switch", "desk", "on"); return err }, "argument on is a string, declared as bool"},
		{"result type", func() error { _, err := Invoke[int](lampTable, l, "Switch", "desk", true); return err }, "answers string, the binding wants int"},
	} {
		if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if len(l.calls) != 1 {
		t.Errorf("refused invocations ran the control: %v", l.calls)
	}
}

func TestValidateNamesTheFault(t *testing.T) {
	ok := func(*lamp, string) (string, error) { return "", nil }
	for _, tc := range []struct {
		name string
		c    Control[*lamp]
		want string
	}{
		{"lower-case name", Control[*lamp]{Name: "switch", Route: "GET /api/{x}", Doc: "d.", Action: "a", Call: Call1(Path[string]("x"), ok)}, `name "switch"`},
		{"doc", Control[*lamp]{Name: "S", Route: "GET /api/{x}", Doc: "Switches", Action: "a", Call: Call1(Path[string]("x"), ok)}, `doc "Switches"`},
		{"method", Control[*lamp]{Name: "S", Route: "PUT /api/{x}", Doc: "d.", Action: "a", Call: Call1(Path[string]("x"), ok)}, `method "PUT"`},
		{"path outside /api", Control[*lamp]{Name: "S", Route: "GET /x/{x}", Doc: "d.", Action: "a", Call: Call1(Path[string]("x"), ok)}, `path "/x/{x}"`},
		{"no wildcard", Control[*lamp]{Name: "S", Route: "GET /api/lamps", Doc: "d.", Action: "a", Call: Call1(Path[string]("x"), ok)}, "has no {x}"},
		{"wildcard without argument", Control[*lamp]{Name: "S", Route: "GET /api/{x}/{y}", Doc: "d.", Action: "a", Call: Call1(Path[string]("x"), ok)}, "{y} is not an argument"},
		{"body on GET", Control[*lamp]{Name: "S", Route: "GET /api/x", Doc: "d.", Action: "a", Call: Call1(BodyField[string]("x"), ok)}, "a GET request carries no body"},
		{"required query", Control[*lamp]{Name: "S", Route: "GET /api/x", Doc: "d.", Action: "a", Call: Call1(QueryParam[string]("x").Required(), ok)}, "only a body field can be Required"},
		{"list in the URL", Control[*lamp]{Name: "S", Route: "GET /api/x", Doc: "d.", Action: "a", Call: Call1(QueryParam[[]string]("x"), func(*lamp, []string) (string, error) { return "", nil })}, "cannot travel in the URL"},
		{"whole body and a field", Control[*lamp]{Name: "S", Route: "POST /api/x", Doc: "d.", Action: "a", Call: Call2(Body[colour]("c"), BodyField[bool]("on"), func(*lamp, colour, bool) (string, error) { return "", nil })}, "a Body argument is the whole body"},
		{"action argument", Control[*lamp]{Name: "S", Route: "POST /api/x", Doc: "d.", Action: "set {y}", Call: Call1(BodyField[string]("x"), ok)}, "action {y}: no such argument"},
		{"action field", Control[*lamp]{Name: "S", Route: "POST /api/x", Doc: "d.", Action: "paint {c.hue}", Call: Call1(Body[colour]("c"), func(*lamp, colour) (string, error) { return "", nil })}, `has no JSON field "hue"`},
		{"action syntax", Control[*lamp]{Name: "S", Route: "POST /api/x", Doc: "d.", Action: "set {x?on}", Call: Call1(BodyField[string]("x"), ok)}, "a choice is {arg?then:else}"},
		{"no call", Control[*lamp]{Name: "S", Route: "POST /api/x", Doc: "d.", Action: "a"}, "no Call"},
	} {
		err := NewTable(tc.c).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
	}
	shared := NewTable(
		Control[*lamp]{Name: "A", Route: "POST /api/x", Doc: "d.", Action: "a", Call: Call1(BodyField[string]("x"), func(*lamp, string) (string, error) { return "", nil })},
		Control[*lamp]{Name: "B", Route: "POST /api/x", Doc: "d.", Action: "b", Call: Call1(BodyField[string]("x"), func(*lamp, string) (string, error) { return "", nil })},
		Control[*lamp]{Name: "A", Route: "POST /api/y", Doc: "d.", Action: "a", Call: Call1(BodyField[string]("x"), func(*lamp, string) (string, error) { return "", nil })},
	)
	err := shared.Validate()
	for _, want := range []string{"route POST /api/x: A, B share it: give each the same Fixed fields", "control A: declared twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("shared route: %v; want %q", err, want)
		}
	}
}

func TestLowerCamel(t *testing.T) {
	for in, want := range map[string]string{
		"SetTransport": "setTransport", "RAGQuery": "ragQuery", "RAGCollections": "ragCollections", "SaveML": "saveML",
		"SetRAGAPIKey": "setRAGAPIKey", "CreateIDESession": "createIDESession", "ML": "ml", "Audit": "audit",
	} {
		if got := LowerCamel(in); got != want {
			t.Errorf("LowerCamel(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestParseAction(t *testing.T) {
	parts, err := ParseAction("approve {name}{tools? tools :}{tools} as {spec.name}")
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v", parts)
	want := "[{Text:approve  Arg: Field: Choice:false Then: Else:} {Text: Arg:name Field: Choice:false Then: Else:} {Text: Arg:tools Field: Choice:true Then: tools  Else:} {Text: Arg:tools Field: Choice:false Then: Else:} {Text: as  Arg: Field: Choice:false Then: Else:} {Text: Arg:spec Field:name Choice:false Then: Else:}]"
	if got != want {
		t.Errorf("parts = %s\nwant    %s", got, want)
	}
	for _, bad := range []string{"open {name", "{}", "{a b}", "{x?y}"} {
		if _, err := ParseAction(bad); err == nil {
			t.Errorf("ParseAction(%q) accepted it", bad)
		}
	}
}
