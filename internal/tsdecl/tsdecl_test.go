package tsdecl

import (
	"strings"
	"testing"
)

func TestFunctionFromSchemas(t *testing.T) {
	in := `{"type":"object","required":["path"],"properties":{
		"path":{"type":"string","description":"file path, relative"},
		"offset":{"type":"integer"},
		"mode":{"type":"string","enum":["lines","bytes"]},
		"tags":{"type":"array","items":{"type":"string"}},
		"opt":{"type":["string","null"]},
		"weird-key":{"type":"boolean"}}}`
	out := `{"type":"object","properties":{"content":{"type":"string"},"items":{"type":"array","items":{"$ref":"#/$defs/Item"}}},
		"$defs":{"Item":{"type":"object","required":["n"],"properties":{"n":{"type":"number"}}}}}`
	got := Function("file_read", "Read a file. */ sneaky", []byte(in), []byte(out))
	for _, want := range []string{
		"/** Read a file. *\\/ sneaky */\n",
		"declare function file_read(args: {\n  /** file path, relative */ path: string;",
		"mode?: \"lines\" | \"bytes\"",
		"offset?: number",
		"tags?: string[]",
		"opt?: string | null",
		"\"weird-key\"?: boolean",
		"Promise<{ content?: string; items?: { n: number }[] }>;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("declaration lacks %q:\n%s", want, got)
		}
	}
}

func TestFunctionOddNamesAndSchemas(t *testing.T) {
	got := Function("my-server__echo", "", map[string]any{"type": "object"}, nil)
	if got != `declare const tools: { "my-server__echo"(args: Record<string, unknown>): Promise<unknown> };` {
		t.Errorf("got %s", got)
	}
	// A recursive schema ends in unknown rather than looping.
	rec := `{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}}}`
	if got := Function("f", "", []byte(rec), nil); !strings.Contains(got, "unknown") {
		t.Errorf("recursive schema: %s", got)
	}
	if got := Function("f", "", []byte(`not json`), nil); got != "declare function f(args: {}): Promise<unknown>;" {
		t.Errorf("bad schema: %s", got)
	}
}
