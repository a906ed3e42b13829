package script

import (
	"context"
	"encoding/json"
	"testing"
)

type echo struct{}

func (echo) Call(ctx context.Context, name string, args json.RawMessage) (CallResult, error) {
	return CallResult{Structured: args}, nil
}

func TestSmoke(t *testing.T) {
	for _, code := range []string{
		`return 1+1`,
		`const r = await tools.echo({a:1}); console.log("got", r); return r`,
		`return await Promise.all([tools.echo({a:1}), tools.echo({a:2})])`,
		`throw new Error("boom")`,
		`let x = 1;
  x.foo();`,
		`return (`,
		`await tools.nope({})`,
		`function f(){return f()} f()`,
		`try { throw new Error("x") } catch (e) { return e.stack }`,
	} {
		res, err := Run(context.Background(), code, []string{"echo"}, echo{}, Limits{})
		t.Logf("%q -> %s %v %v", code, res.Value, res.Logs, err)
	}
}
