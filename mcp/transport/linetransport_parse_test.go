package transport

import (
	"bytes"
	"encoding/json"
	"testing"
)

var parseCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_exists","arguments":{"path":"a"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
	`{"jsonrpc":"2.0","id":"x","method":"ping"}`, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"pi\u006eg"}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`, `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"é"}`, `{"jsonrpc":"2.0","id":1,"method":"ping","method":"x"}`,
	` {"jsonrpc" : "2.0" , "id" : 7 , "method" : "ping" } `, `{"jsonrpc":"2.0","id":1,"method":5}`,
}

// parseRequest must agree with encoding/json whenever it takes a message.
func checkParse(t *testing.T, in string) {
	w, ok := parseRequest([]byte(in))
	if !ok {
		return
	}
	var want wireMessage
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatalf("%q: parsed what encoding/json refuses: %v", in, err)
	}
	if w.Version != want.Version || !bytes.Equal(w.ID, want.ID) || !bytes.Equal(w.Params, want.Params) ||
		(w.Method == nil) != (want.Method == nil) || (w.Method != nil && *w.Method != *want.Method) ||
		want.Result != nil || want.Error != nil {
		t.Fatalf("%q: parsed %+v, encoding/json %+v", in, w, want)
	}
}

func TestParseRequestMatchesUnmarshal(t *testing.T) {
	for _, in := range parseCases {
		checkParse(t, in)
	}
	if _, ok := parseRequest([]byte(parseCases[0])); !ok {
		t.Error("a plain tools/call must take the fast path")
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, in := range parseCases {
		f.Add(in)
	}
	f.Fuzz(checkParse)
}
