package clientconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonDialect is what a client's JSON parser accepts: strict JSON (JSON.parse, Go's
// encoding/json), JSON with comments, and JSON with comments and trailing commas (JSONC as VS
// Code and Zed read it). The file is parsed as HuJSON (github.com/tailscale/hujson: an exact
// syntax tree that packs back byte for byte) and refused when it uses what the client rejects.
type jsonDialect struct {
	comments, trailingCommas bool
}

// parseJSON parses data for a client that reads the dialect d; errors name the line and the fix.
func parseJSON(data []byte, d jsonDialect, what string) (hujson.Value, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return v, fmt.Errorf("%s does not parse: %v; fix the file (or restore it from a backup) and run this again", what, strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return v, fmt.Errorf("%s: the top level is not a JSON object; fix the file and run this again", what)
	}
	// commentAt is the offset of the first comment in extra, which starts at off: the line the
	// user has to look at, not that of the value the comment is attached to.
	commentAt := func(extra hujson.Extra, off int) int { return off + max(bytes.IndexByte(extra, '/'), 0) }
	for x := range v.All() {
		if !d.comments {
			if !x.BeforeExtra.IsStandard() {
				return v, fmt.Errorf("%s: line %d: a comment, which this client's JSON parser does not accept; remove it and run this again", what, line(data, commentAt(x.BeforeExtra, x.StartOffset-len(x.BeforeExtra))))
			}
			if !x.AfterExtra.IsStandard() {
				return v, fmt.Errorf("%s: line %d: a comment, which this client's JSON parser does not accept; remove it and run this again", what, line(data, commentAt(x.AfterExtra, x.EndOffset)))
			}
		}
		if d.trailingCommas {
			continue
		}
		var last *hujson.Value
		switch c := x.Value.(type) {
		case *hujson.Object:
			if !d.comments && !c.AfterExtra.IsStandard() {
				return v, fmt.Errorf("%s: line %d: a comment, which this client's JSON parser does not accept; remove it and run this again", what, line(data, commentAt(c.AfterExtra, x.EndOffset-1-len(c.AfterExtra))))
			}
			if n := len(c.Members); n > 0 {
				last = &c.Members[n-1].Value
			}
		case *hujson.Array:
			if !d.comments && !c.AfterExtra.IsStandard() {
				return v, fmt.Errorf("%s: line %d: a comment, which this client's JSON parser does not accept; remove it and run this again", what, line(data, commentAt(c.AfterExtra, x.EndOffset-1-len(c.AfterExtra))))
			}
			if n := len(c.Elements); n > 0 {
				last = &c.Elements[n-1]
			}
		}
		if last != nil && last.AfterExtra != nil {
			return v, fmt.Errorf("%s: line %d: a trailing comma, which this client's JSON parser does not accept; remove it and run this again", what, line(data, last.EndOffset))
		}
	}
	return v, nil
}

func line(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:max(off, 0)], []byte("\n")) + 1
}

// plain decodes a HuJSON value as standard JSON.
func plain(v hujson.Value) (any, error) {
	c := v.Clone()
	c.Standardize()
	var out any
	err := json.Unmarshal(c.Pack(), &out)
	return out, err
}

// member finds name in obj.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// jsonInspect returns the entry named name under the container key, or nil.
func jsonInspect(data []byte, d jsonDialect, container, name, what string) (map[string]any, error) {
	v, err := parseJSON(data, d, what)
	if err != nil {
		return nil, err
	}
	root := v.Value.(*hujson.Object)
	i := member(root, container)
	if i < 0 {
		return nil, nil
	}
	cont, ok := root.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%s: %q is not an object", what, container)
	}
	j := member(cont, name)
	if j < 0 {
		return nil, nil
	}
	e, err := plain(cont.Members[j].Value)
	if err != nil {
		return nil, err
	}
	m, ok := e.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: %s.%s is not an object", what, container, name)
	}
	return m, nil
}

var leadingWS = regexp.MustCompile(`(?m)^([ \t]+)\S`)

// indentUnit guesses the file's indentation step: the smallest indentation of any line.
func indentUnit(data []byte) string {
	unit := ""
	for _, m := range leadingWS.FindAllSubmatch(data, -1) {
		s := string(m[1])
		if strings.HasPrefix(s, "\t") {
			return "\t"
		}
		if unit == "" || len(s) < len(unit) {
			unit = s
		}
	}
	if unit == "" {
		return "  "
	}
	return unit
}

// lineIndent is the leading whitespace of the line holding offset off.
func lineIndent(data []byte, off int) string {
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// render is the value's JSON text laid out as a member at indentation ind (one line when
// compact), in the key order of the entry.
func render(v any, ind, unit string, compact bool) (hujson.Value, error) {
	var b []byte
	var err error
	if compact {
		b, err = json.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, ind, unit)
	}
	if err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(b)
}

// jsonAppend adds name: value as the last member of obj, which starts at objStart in data,
// laid out like its siblings (indentation, trailing comma) and keeping every comment in place.
func jsonAppend(data []byte, obj *hujson.Object, objStart int, name string, value any) error {
	unit := indentUnit(data)
	after := []byte(obj.AfterExtra)
	nl := bytes.LastIndexByte(after, '\n')
	compact := nl < 0 && len(obj.Members) > 0
	var ind string
	if n := len(obj.Members); n > 0 {
		be := obj.Members[n-1].Name.BeforeExtra
		if k := bytes.LastIndexByte(be, '\n'); k >= 0 {
			ind = string(be[k+1:])
		} else {
			compact = true
		}
	} else {
		ind = lineIndent(data, objStart) + unit
	}
	if strings.TrimLeft(ind, " \t") != "" { // a comment ends the line before the member
		ind = lineIndent(data, objStart) + unit
	}
	val, err := render(value, ind, unit, compact)
	if err != nil {
		return err
	}
	val.BeforeExtra = hujson.Extra(" ")
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: val}
	trailing := false
	if n := len(obj.Members); n > 0 {
		last := &obj.Members[n-1].Value
		trailing = last.AfterExtra != nil
	}
	if compact {
		m.Name.BeforeExtra = append(append(hujson.Extra{}, after...), ' ')
		obj.AfterExtra = nil
	} else {
		var head, tail []byte
		if nl >= 0 {
			head, tail = after[:nl], after[nl:]
		} else {
			head, tail = after, []byte("\n"+lineIndent(data, objStart))
		}
		m.Name.BeforeExtra = hujson.Extra(string(head) + "\n" + ind)
		obj.AfterExtra = append(hujson.Extra{}, tail...)
	}
	if trailing {
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
	return nil
}

// jsonRemove removes member i of obj, the inverse of jsonAppend: the comments around it stay,
// the trailing comma (if the object had one) moves to the new last member.
func jsonRemove(obj *hujson.Object, i int) {
	m := obj.Members[i]
	be := []byte(m.Name.BeforeExtra)
	head := bytes.TrimSuffix(bytes.TrimRight(be, " \t"), []byte("\n"))
	last := i == len(obj.Members)-1
	obj.Members = append(obj.Members[:i:i], obj.Members[i+1:]...)
	if !last {
		next := &obj.Members[i].Name
		next.BeforeExtra = hujson.Extra(string(head) + string(next.BeforeExtra))
		return
	}
	if n := len(obj.Members); n > 0 {
		prev := &obj.Members[n-1].Value
		if m.Value.AfterExtra == nil && prev.AfterExtra != nil { // no trailing comma
			head = append(append([]byte{}, prev.AfterExtra...), head...)
			prev.AfterExtra = nil
		} else if m.Value.AfterExtra != nil && prev.AfterExtra == nil {
			prev.AfterExtra = hujson.Extra{}
		}
	}
	after := string(head) + string(obj.AfterExtra)
	if len(obj.Members) == 0 && strings.TrimSpace(after) == "" {
		after = ""
	}
	obj.AfterExtra = hujson.Extra(after)
}

// jsonSet makes data's container.name equal entry (connect) or absent (entry nil: disconnect).
// Everything else in the file — other members, comments, order, indentation, trailing commas —
// is kept byte for byte. It returns data itself when nothing changes.
func jsonSet(data []byte, d jsonDialect, container, name string, entry any, what string) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		if entry == nil {
			return data, nil
		}
		b, err := json.MarshalIndent(map[string]any{container: map[string]any{name: entry}}, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	v, err := parseJSON(data, d, what)
	if err != nil {
		return nil, err
	}
	root := v.Value.(*hujson.Object)
	ci := member(root, container)
	if ci < 0 {
		if entry == nil {
			return data, nil
		}
		if err := jsonAppend(data, root, v.StartOffset, container, map[string]any{name: entry}); err != nil {
			return nil, err
		}
		return v.Pack(), nil
	}
	cv := &root.Members[ci].Value
	cont, ok := cv.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%s: %q is not an object; fix the file and run this again", what, container)
	}
	j := member(cont, name)
	switch {
	case entry == nil && j < 0:
		return data, nil
	case entry == nil:
		jsonRemove(cont, j)
	case j < 0:
		if err := jsonAppend(data, cont, cv.StartOffset, name, entry); err != nil {
			return nil, err
		}
	default:
		cur, err := plain(cont.Members[j].Value)
		if err != nil {
			return nil, err
		}
		want, _ := roundTrip(entry)
		if reflect.DeepEqual(cur, want) {
			return data, nil
		}
		old := &cont.Members[j].Value
		ind := lineIndent(data, cont.Members[j].Name.StartOffset)
		val, err := render(entry, ind, indentUnit(data), !bytes.Contains(data[old.StartOffset:old.EndOffset], []byte("\n")))
		if err != nil {
			return nil, err
		}
		old.Value = val.Value
	}
	return v.Pack(), nil
}

// roundTrip is v as encoding/json decodes it (for comparisons with a decoded file).
func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// checkJSONEdit verifies an edit: the new file parses for the client, holds exactly the intended
// entry, and everything else decodes as before.
func checkJSONEdit(before, after []byte, d jsonDialect, container, name string, entry any, what string) error {
	strip := func(data []byte) (map[string]any, any, error) {
		if len(bytes.TrimSpace(data)) == 0 {
			return map[string]any{}, nil, nil
		}
		v, err := parseJSON(data, d, what)
		if err != nil {
			return nil, nil, err
		}
		p, err := plain(v)
		if err != nil {
			return nil, nil, err
		}
		m := p.(map[string]any)
		var got any
		if c, ok := m[container].(map[string]any); ok {
			got = c[name]
			delete(c, name)
			if len(c) == 0 {
				delete(m, container)
			}
		}
		return m, got, nil
	}
	b, _, err := strip(before)
	if err != nil {
		return err
	}
	a, got, err := strip(after)
	if err != nil {
		return fmt.Errorf("internal error: the edited file would not parse (%v); nothing written", err)
	}
	if !reflect.DeepEqual(a, b) {
		return errors.New("internal error: the edit would change other settings; nothing written")
	}
	if entry != nil {
		want, _ := roundTrip(entry)
		if !reflect.DeepEqual(got, want) {
			return errors.New("internal error: the edited file does not hold the entry; nothing written")
		}
	} else if got != nil {
		return errors.New("internal error: the entry is still there; nothing written")
	}
	return nil
}
