package dashcontrol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// maxBody caps a control's request body: the largest ones (a policy, a server) are a few KiB.
const maxBody = 1 << 20

// Route is one HTTP route of the table and the controls it serves (one, or several told apart by
// their Fixed body fields).
type Route[R any] struct {
	// Pattern is the route as http.ServeMux takes it: "POST /api/transports/{name}".
	Pattern  string
	controls []Control[R]
}

// Routes groups the controls served generically (all but ServeByHand ones) by route, in table order.
func (t *Table[R]) Routes() []Route[R] {
	var out []Route[R]
	at := map[string]int{}
	for _, c := range t.controls {
		if c.ServeByHand {
			continue
		}
		i, ok := at[c.Route]
		if !ok {
			i = len(out)
			at[c.Route] = i
			out = append(out, Route[R]{Pattern: c.Route})
		}
		out[i].controls = append(out[i].controls, c)
	}
	return out
}

// Serve decodes the request's arguments as the route's control declares them and runs it on
// recv. An error names the field at fault and what was wanted ("enabled: required; want
// {"enabled": true|false}"); the caller answers it as a 400.
func (rt Route[R]) Serve(recv R, r *http.Request) (any, error) {
	var body []byte
	var fields map[string]json.RawMessage
	if sp := rt.controls[0].Spec(); sp.ReadsBody() {
		b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
		if err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
		body = b
		if sp.readsBodyFields() {
			if fields, err = bodyObject(body, sp); err != nil {
				return nil, err
			}
		}
	}
	c, err := rt.pick(fields)
	if err != nil {
		return nil, err
	}
	args := make([]any, len(c.Call.args))
	for i, a := range c.Call.args {
		if args[i], err = decodeArg(a, r, body, fields, c.Spec()); err != nil {
			return nil, err
		}
	}
	return c.Call.fn(recv, args)
}

// pick finds the control whose Fixed fields the body matches.
func (rt Route[R]) pick(fields map[string]json.RawMessage) (Control[R], error) {
	if len(rt.controls) == 1 {
		return rt.controls[0], nil
	}
	for _, c := range rt.controls {
		match := true
		for k, want := range c.Fixed {
			got, err := fixedValue(k, want, fields)
			if err != nil {
				return c, err
			}
			match = match && got == want
		}
		if match {
			return c, nil
		}
	}
	return rt.controls[0], fmt.Errorf("body: no control of %s takes these %s", rt.Pattern, fixedKeys(rt.controls[0].Fixed))
}

// fixedValue reads body field k as want's type; absent or null is the zero value.
func fixedValue(k string, want any, fields map[string]json.RawMessage) (any, error) {
	t := reflect.TypeOf(want)
	v := reflect.New(t)
	if raw, ok := fields[k]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return nil, fmt.Errorf("%s: want %s (%v)", k, jsonHint(t, false), err)
		}
	}
	return v.Elem().Interface(), nil
}

func fixedKeys(m map[string]any) string {
	var keys []string
	for k := range m {
		keys = append(keys, strconv.Quote(k))
	}
	return "values of " + strings.Join(keys, ", ")
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// ReadsBody tells whether any argument or fixed field comes from the request body.
func (s Spec) ReadsBody() bool {
	if len(s.Fixed) > 0 {
		return true
	}
	for _, a := range s.Args {
		if a.Source == SourceBody || a.Source == SourceBodyField {
			return true
		}
	}
	return false
}

// readsBodyFields tells whether the body is an object read field by field.
func (s Spec) readsBodyFields() bool {
	if len(s.Fixed) > 0 {
		return true
	}
	for _, a := range s.Args {
		if a.Source == SourceBodyField {
			return true
		}
	}
	return false
}

// bodyHint is the JSON body a control wants, for errors.
func (s Spec) bodyHint() string {
	var parts []string
	for _, a := range s.Args {
		switch a.Source {
		case SourceBody:
			return argHint(a)
		case SourceBodyField:
			parts = append(parts, strconv.Quote(a.Name)+": "+argHint(a))
		}
	}
	for _, k := range sortedKeys(s.Fixed) {
		parts = append(parts, strconv.Quote(k)+": "+jsonHint(reflect.TypeOf(s.Fixed[k]), false))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func bodyObject(body []byte, s Spec) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			return nil, fmt.Errorf("body: want a JSON object, %s", s.bodyHint())
		}
		return nil, fmt.Errorf("body: invalid JSON: %v; want %s", err, s.bodyHint())
	}
	return fields, nil
}

func decodeArg(a Arg, r *http.Request, body []byte, fields map[string]json.RawMessage, s Spec) (any, error) {
	v := reflect.New(a.Type)
	switch a.Source {
	case SourcePath:
		if err := parseText(v.Elem(), a.Name, r.PathValue(a.Name)); err != nil {
			return nil, err
		}
	case SourceQueryParam:
		text := r.URL.Query().Get(a.Name)
		if text == "" {
			if a.Default != nil {
				v.Elem().Set(reflect.ValueOf(a.Default))
			}
			break
		}
		if err := parseText(v.Elem(), a.Name, text); err != nil {
			return nil, err
		}
	case SourceQuery:
		q := r.URL.Query()
		for _, f := range JSONFields(a.Type) {
			if text := q.Get(f.Name); text != "" {
				if err := parseText(v.Elem().FieldByIndex(f.Index), f.Name, text); err != nil {
					return nil, err
				}
			}
		}
	case SourceBody:
		if err := json.Unmarshal(body, v.Interface()); err != nil {
			return nil, fmt.Errorf("body: invalid JSON: %v; want %s", err, s.bodyHint())
		}
	case SourceBodyField:
		raw, ok := fields[a.Name]
		if !ok || isNull(raw) {
			if a.Required {
				return nil, fmt.Errorf("%s: required; want %s", a.Name, s.bodyHint())
			}
			break
		}
		if err := json.Unmarshal(raw, v.Interface()); err != nil {
			return nil, fmt.Errorf("%s: want %s (%v)", a.Name, argHint(a), err)
		}
	}
	return v.Elem().Interface(), nil
}

// parseText sets v (a string, integer or boolean) from a path or query value, naming the
// parameter when the text does not parse.
func parseText(v reflect.Value, name, text string) error {
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%s: %q is not a number", name, text)
		}
		v.SetInt(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", name, text)
		}
		v.SetBool(b)
	default:
		return fmt.Errorf("%s: a %v cannot be read from a URL", name, v.Type())
	}
	return nil
}
