package tool

import (
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Portable rewrites a generated schema, in place, into the subset every model provider accepts:
//   - a single "type" per schema: Gemini rejects unions such as ["null","array"], which
//     jsonschema-go generates for every slice and map; the union collapses to its non-null type
//     (outputs never carry null there: Add replaces nil slices and maps with empty ones);
//   - "properties" on every object schema: OpenAI rejects objects without it, even when
//     additionalProperties describes a map.
//
// It walks every nested schema (properties, items, additionalProperties, combinators, $defs), so
// a tool added tomorrow complies without thinking about it.
func Portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		rest := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(rest) == 1 {
			s.Type, s.Types = rest[0], nil
		} else if len(rest) > 1 {
			// Several real types: no single type describes the value; drop "type" and let anyOf
			// carry one single-typed branch each.
			s.Types = nil
			for _, t := range rest {
				s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Type: t})
			}
		} else {
			s.Type, s.Types = "null", nil
		}
	}
	if s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for _, p := range s.Properties {
		Portable(p)
	}
	for _, p := range s.PatternProperties {
		Portable(p)
	}
	for _, p := range s.Defs {
		Portable(p)
	}
	for _, p := range s.Definitions {
		Portable(p)
	}
	Portable(s.Items)
	for _, p := range s.ItemsArray {
		Portable(p)
	}
	for _, p := range s.PrefixItems {
		Portable(p)
	}
	Portable(s.AdditionalProperties)
	Portable(s.AdditionalItems)
	Portable(s.Not)
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, p := range list {
			Portable(p)
		}
	}
}

// JSONValue is the schema of a Go `any` in a tool's input or output: any JSON value, with its
// types listed one single-typed branch each (anyOf, not a "type" list: Gemini takes one type per
// schema and Ajv's strict mode refuses union types). jsonschema-go leaves `any` without a type,
// which the MCP Inspector's strict mode flags, and made map[string]any an object that describes
// none of its members, which Gemini's schema checks flag.
//
// The members of the object and array branches are any JSON value again. A schema can only say
// so with a $ref to itself, which several clients do not follow (Codex shows such a parameter as
// a string, Zed drops the tool), so they stay untyped: the one place a schema here has no type
// (TestEverySchemaPortable in mcp knows it).
func JSONValue() *jsonschema.Schema {
	anyValue := func() *jsonschema.Schema { return &jsonschema.Schema{Description: "any JSON value"} }
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string"},
		{Type: "number"},
		{Type: "boolean"},
		{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: anyValue()},
		{Type: "array", Items: anyValue()},
		{Type: "null"},
	}}
}

// schemaOptions are the options every tool's schemas are generated with: a Go `any` is a JSON
// value (see JSONValue).
func schemaOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[any](): JSONValue()}}
}

// hasNilable reports whether values of t can contain a nil slice or map that would encode as
// null, so Add only walks output values that need it.
func hasNilable(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice:
		return true
	case reflect.Map:
		return true
	case reflect.Pointer, reflect.Array:
		return hasNilable(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && hasNilable(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// fillNil replaces nil slices and maps reachable from v (addressable) with empty ones, so an
// output encodes [] or {} where its schema promises an array or object, never null.
func fillNil(v reflect.Value) {
	switch v.Kind() {
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			fillNil(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			fillNil(v.Elem())
		}
	case reflect.Array:
		for i := range v.Len() {
			fillNil(v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				fillNil(v.Field(i))
			}
		}
	}
}
