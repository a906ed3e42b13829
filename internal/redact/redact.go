// Package redact is the one list of tool-argument keys whose values are not shown as sent, and
// how each is shown instead. The audit trail (audit.SummarizeArgs, which the dashboard's activity
// feed and Logs view show, and audit.SummarizeArgsValues, the feed's per-argument display values)
// and approvals (policy.Summarize: the dashboard, elicitation) follow it, so a key is hidden the
// same way wherever a call is shown. The dashboard itself keeps no list: it only ever gets
// arguments these have summarised.
package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Class is how an argument's value is shown outside the call.
type Class int

const (
	// Shown values are shown, with any secret nested inside them replaced (Nested).
	Shown Class = iota
	// Payload is bulk content (file contents, edit strings, stdin): shown as its size, plus its
	// sha256 in the audit trail, which can then prove what was sent without holding it.
	Payload
	// Private is text a person deciding on the call should read (a script, a prompt, a message)
	// but the audit trail must not keep: the trail records its size and sha256 as for Payload;
	// an approval shows it.
	Private
	// Secret is a credential: shown as Marker everywhere, at any depth of the arguments, with
	// neither size nor hash (the hash of a short password can be brute-forced).
	Secret
)

// Marker stands in for a secret's value.
const Marker = "<redacted>"

// The lists. A key is matched exactly (Payload, Private) or, for Secret, after lowercasing and
// dropping "_", "-" and ".", by its ending: api_key, X-Api-Key, GITHUB_TOKEN, client_secret.
var (
	payloadKeys = []string{"content", "old_string", "new_string", "input", "stdin", "data"}
	privateKeys = []string{"script", "message", "prompt", "response", "text"}
	secretEnds  = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
		"privatekey", "sessionkey", "authorization", "auth", "bearer", "cookie", "credential", "credentials"}
	// envKeys hold environment assignments (["NAME=VALUE", …] or {"NAME": "VALUE"}): an
	// assignment to a secret-looking NAME is shown as NAME=<redacted>.
	envKeys = []string{"env"}
)

// Of says how the value of the argument named key is shown.
func Of(key string) Class {
	for _, k := range payloadKeys {
		if key == k {
			return Payload
		}
	}
	for _, k := range privateKeys {
		if key == k {
			return Private
		}
	}
	if IsSecret(key) {
		return Secret
	}
	return Shown
}

// IsSecret reports whether a key (an argument, an object member, an environment variable) names
// a credential.
func IsSecret(key string) bool {
	// Compare from the end without building the normalised key: this runs for every argument of
	// every call.
	for _, w := range secretEnds {
		if endsWithNormalised(key, w) {
			return true
		}
	}
	return false
}

// endsWithNormalised reports whether key, lowercased and without '_', '-' and '.', ends with w
// (lowercase ASCII).
func endsWithNormalised(key, w string) bool {
	i := len(w) - 1
	for j := len(key) - 1; j >= 0 && i >= 0; j-- {
		c := key[j]
		if c == '_' || c == '-' || c == '.' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
		i--
	}
	return i < 0
}

// mayNest reports whether v (a JSON value) can hold a secret below its top level.
func mayNest(v []byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && (v[0] == '{' || v[0] == '[')
}

// Nested returns the value v of the Shown argument key with every secret inside it replaced by
// Marker: members of objects, at any depth, whose key IsSecret, and assignments to a
// secret-looking name under an environment key. v itself is returned when it holds none (the
// common case costs a byte check); otherwise the result is compact JSON with objects' keys sorted.
func Nested(key string, v json.RawMessage) json.RawMessage {
	if !mayNest(v) {
		return v
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber() // numbers come back as written
	var x any
	if err := dec.Decode(&x); err != nil {
		return v
	}
	x, changed := scrub(isEnv(key), x)
	if !changed {
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Marker's angle brackets stay readable
	if err := enc.Encode(x); err != nil {
		return v
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func isEnv(key string) bool {
	for _, k := range envKeys {
		if key == k {
			return true
		}
	}
	return false
}

// scrub replaces the secrets in x; env says x is the value of an environment key.
func scrub(env bool, x any) (any, bool) {
	changed := false
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if IsSecret(k) {
				t[k], changed = Marker, true
				continue
			}
			if nv, c := scrub(isEnv(k), v); c {
				t[k], changed = nv, true
			}
		}
	case []any:
		for i, v := range t {
			if s, ok := v.(string); ok && env {
				if name, _, ok := strings.Cut(s, "="); ok && IsSecret(name) {
					t[i], changed = name+"="+Marker, true
				}
				continue
			}
			if nv, c := scrub(false, v); c {
				t[i], changed = nv, true
			}
		}
	}
	return x, changed
}
