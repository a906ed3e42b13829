package dashcontrol

import (
	"encoding/json"
	"reflect"
	"strings"
)

// JSONField is one field of a struct as encoding/json writes it.
type JSONField struct {
	// Name is the JSON key.
	Name string
	// Index is the field's index path for reflect.Value.FieldByIndex (embedded structs flattened).
	Index []int
	Type  reflect.Type
}

// JSONFields lists the fields encoding/json reads and writes for struct type t, in order:
// exported, not tagged "-", the fields of untagged embedded structs in their place.
func JSONFields(t reflect.Type) []JSONField {
	var out []JSONField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			for _, sub := range JSONFields(f.Type) {
				sub.Index = append([]int{i}, sub.Index...)
				out = append(out, sub)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name := tag
		if name == "" {
			name = f.Name
		}
		out = append(out, JSONField{Name: name, Index: []int{i}, Type: f.Type})
	}
	return out
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// jsonHint sketches the JSON a value of type t is written as, for "want …" in errors:
// {"enabled": true|false}, ["…"], {"name": "…", "args": ["…"]}. Structs are spelled out at the
// top level only.
func jsonHint(t reflect.Type, top bool) string {
	if t == rawMessage {
		return "{…}"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true|false"
	case reflect.String:
		return `"…"`
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "0"
	case reflect.Slice, reflect.Array:
		return "[" + jsonHint(t.Elem(), false) + "]"
	case reflect.Pointer:
		return jsonHint(t.Elem(), top)
	case reflect.Struct:
		if !top {
			return "{…}"
		}
		var b strings.Builder
		b.WriteString("{")
		for i, f := range JSONFields(t) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"` + f.Name + `": ` + jsonHint(f.Type, false))
		}
		b.WriteString("}")
		return b.String()
	case reflect.Map:
		return "{…}"
	}
	return "…"
}

// argHint is the JSON an argument is sent as: its values' union when it has them.
func argHint(a Arg) string {
	if len(a.Values) > 0 {
		return `"` + strings.Join(a.Values, `"|"`) + `"`
	}
	return jsonHint(a.Type, a.Source == SourceBody)
}
