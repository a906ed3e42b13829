package upstream

// Editing [[servers]] entries in Switchboard's TOML config file, on the text (internal/tomledit
// has the scanner and says why): an edit adds, removes or rewrites whole lines of one entry, and
// BurntSushi/toml decodes the result to check that everything but that entry decodes exactly as
// before. Everything else in the file stays byte for byte.
//
// What belongs to an entry (what RemoveServer removes): its [[servers]] header through its last
// key, its sub-tables ([servers.env] after the header belongs to that entry), and the comment
// lines after its last key that are not directly above the next table header (a comment
// directly above a header describes that table). Comment lines directly above the entry's own
// header are kept: they may be the file's heading or a commented-out setting of the table above,
// and a stray comment (visible in the preview) is cheaper than a lost one. At the end of the
// file, comments after a blank line are the file's footer and stay.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/switchboard-hub/switchboard/internal/tomledit"
)

// ReservedNames are the hub's own toolset names, which a server may not take: `<name>__<tool>`
// would read as one of the hub's tool groups in the dashboard, the policy and --toolsets. They
// are the names of the toolsets table in mcp/toolsets.go (internal packages never import mcp);
// a test in package mcp should keep the two lists equal. A function, not a variable, so no
// caller can change the list for everyone.
func ReservedNames() []string {
	return []string{"files", "process", "ws", "metrics", "rag", "ml", "browser", "ide", "git", "web", "memory", "code"}
}

// specsFile is the part of the config file this package reads.
type specsFile struct {
	Servers []Spec `toml:"servers"`
}

// ReadSpecs decodes the [[servers]] entries of a config file (the rest of the file is not
// looked at). A key a Spec does not have is an error naming it, so a typo does not go unnoticed;
// the specs are not validated (ValidateAll does that, with the reserved names).
func ReadSpecs(data []byte) ([]Spec, error) {
	var f specsFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, tomledit.ParseError(err)
	}
	for _, k := range md.Undecoded() {
		if len(k) > 0 && k[0] == "servers" {
			return nil, fmt.Errorf("servers: unknown key %s; a [[servers]] entry takes name, command, args, env, cwd, url, headers, transport, oauth, enabled, start, env_passthrough and sandbox", k)
		}
	}
	return f.Servers, nil
}

// AddServer returns data with a [[servers]] entry for s appended after the last entry (at the end
// of the file when there is none). s must be valid and its name new.
func AddServer(data []byte, s Spec) ([]byte, error) {
	if err := s.Validate(ReservedNames()); err != nil {
		return nil, err
	}
	doc, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	if i := doc.index(s.Name); i >= 0 {
		return nil, fmt.Errorf("servers: %q: name: already configured (line %d); choose another name, or remove that entry first", s.Name, doc.stmts[doc.blocks[i].header].Line)
	}
	pos := len(data)
	if n := len(doc.blocks); n > 0 {
		pos = doc.stmts[doc.blocks[n-1].last].End
	}
	before, after := data[:pos], data[pos:]
	var b bytes.Buffer
	b.Write(before)
	if len(bytes.TrimSpace(before)) > 0 {
		if !bytes.HasSuffix(before, []byte("\n")) {
			b.WriteString(doc.nl)
		}
		if !tomledit.EndsWithBlankLine(before) {
			b.WriteString(doc.nl) // a blank line between tables
		}
	}
	b.WriteString(renderSpec(s, doc.nl))
	if len(after) > 0 && !tomledit.StartsWithBlankLine(after) {
		b.WriteString(doc.nl)
	}
	b.Write(after)
	out := b.Bytes()
	if err := checkEdit(data, out, s.Name, func(_, got map[string]any) error {
		if got == nil {
			return errors.New("the entry is missing")
		}
		specs, err := decodeLenient(out)
		if err != nil {
			return err
		}
		for _, g := range specs {
			if g.Name == s.Name && sameSpec(g, s) {
				return nil
			}
		}
		return errors.New("the entry does not decode as given")
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// RemoveServer returns data without the entry named name (see the top of this file for what
// belongs to an entry). One blank line that separated the entry from its neighbours goes with it.
func RemoveServer(data []byte, name string) ([]byte, error) {
	doc, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	i, err := doc.find(name)
	if err != nil {
		return nil, err
	}
	blk := doc.blocks[i]
	st := doc.stmts
	start, end := st[blk.header].Start, st[blk.last].End
	// Blank lines around the entry: the file should not gain a double blank line where it was
	// (nor a blank line at its start or end).
	p := blk.header - 1
	for p >= 0 && st[p].Kind == tomledit.Blank {
		p--
	}
	q := blk.last + 1
	for q < len(st) && st[q].Kind == tomledit.Blank {
		q++
	}
	preStart := 0
	if p >= 0 {
		preStart = st[p].End
	}
	postEnd := len(data)
	if q < len(st) {
		postEnd = st[q].Start
	}
	pre, post := start > preStart, postEnd > end
	switch {
	case q == len(st): // last in the file
		start, end = preStart, len(data)
	case p < 0: // first in the file
		end = postEnd
	case pre && post:
		start = preStart
	}
	out := slices.Concat(data[:start], data[end:])
	if err := checkEdit(data, out, name, func(_, got map[string]any) error {
		if got != nil {
			return errors.New("the entry is still there")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// SetServerEnabled switches the entry named name on or off. Off writes `enabled = false` (in
// place of an `enabled = true`, keeping a comment after it, or as a new line after the entry's
// name). On removes the `enabled` line, since an entry without one is on; that keeps the file as
// AddServer writes it, so disable then enable gives the file back byte for byte. An entry in the
// state asked for is left alone (an explicit `enabled = true` stays).
func SetServerEnabled(data []byte, name string, on bool) ([]byte, error) {
	doc, err := parseConfig(data)
	if err != nil {
		return nil, err
	}
	i, err := doc.find(name)
	if err != nil {
		return nil, err
	}
	if doc.specs[i].IsEnabled() == on {
		return data, nil
	}
	blk := doc.blocks[i]
	st := doc.stmts
	enabled, nameAt := -1, -1
	for j := blk.header + 1; j < blk.own; j++ {
		if st[j].Kind != tomledit.KeyValue || len(st[j].Key) != 1 {
			continue
		}
		switch st[j].Key[0] {
		case "enabled":
			enabled = j
		case "name":
			nameAt = j
		}
	}
	var out []byte
	switch {
	case on: // enabled = false is there (off means it is set)
		if enabled < 0 {
			return nil, fmt.Errorf("servers: %q: enabled: set in a form switchboard does not edit; edit the entry by hand", name)
		}
		out = slices.Concat(data[:st[enabled].Start], data[st[enabled].End:])
	case enabled >= 0: // enabled = true
		out = slices.Concat(data[:st[enabled].ValStart], []byte("false"), data[st[enabled].ValEnd:])
	default:
		at := blk.header
		if nameAt >= 0 {
			at = nameAt
		}
		pos := st[at].End
		ind := tomledit.LeadingSpace(data[st[at].Start:])
		line := ind + "enabled = false" + doc.nl
		if !bytes.HasSuffix(data[:pos], []byte("\n")) {
			line = doc.nl + line
		}
		out = slices.Concat(data[:pos], []byte(line), data[pos:])
	}
	if err := checkEdit(data, out, name, func(was, got map[string]any) error {
		if got == nil {
			return errors.New("the entry is missing")
		}
		e, set := got["enabled"]
		if on && set || !on && e != false {
			return errors.New("enabled did not change")
		}
		w, g := copyMap(was), copyMap(got)
		delete(w, "enabled")
		delete(g, "enabled")
		if !reflect.DeepEqual(w, g) {
			return errors.New("other keys of the entry changed")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---- the document model ----

// serverBlock is one [[servers]] entry as statements.
type serverBlock struct {
	header int // the [[servers]] header
	own    int // after the entry's own keys: its first sub-table header, or the end of the entry
	last   int // the entry's last statement (keys, sub-tables, comments that belong to it)
}

type configDoc struct {
	stmts  []tomledit.Stmt
	blocks []serverBlock
	specs  []Spec // decoded, one per block, in order
	nl     string // the file's line ending
}

func (d *configDoc) index(name string) int {
	return slices.IndexFunc(d.specs, func(s Spec) bool { return s.Name == name })
}

// find is the entry named name; an error when there is none, or two (the edit could not tell
// which the user means).
func (d *configDoc) find(name string) (int, error) {
	i := d.index(name)
	if i < 0 {
		return i, d.notFound(name)
	}
	for j := i + 1; j < len(d.specs); j++ {
		if d.specs[j].Name == name {
			return i, fmt.Errorf("servers: %q: name: configured twice (lines %d and %d); rename or remove one of them by hand", name,
				d.stmts[d.blocks[i].header].Line, d.stmts[d.blocks[j].header].Line)
		}
	}
	return i, nil
}

func (d *configDoc) notFound(name string) error {
	var names []string
	for _, s := range d.specs {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("servers: no server named %q: the config has no [[servers]] entries", name)
	}
	return fmt.Errorf("servers: no server named %q; configured: %s", name, strings.Join(names, ", "))
}

// decodeLenient decodes the servers, ignoring keys a Spec does not have (an edit must still work
// on an entry with a typo: removing it is one way to fix it).
func decodeLenient(data []byte) ([]Spec, error) {
	var f specsFile
	if _, err := toml.Decode(string(data), &f); err != nil {
		return nil, tomledit.ParseError(err)
	}
	return f.Servers, nil
}

// parseConfig decodes and scans data and finds its [[servers]] entries. Forms of servers the
// text edits cannot handle (an inline array, a sub-table away from its entry) are refused with
// the line.
func parseConfig(data []byte) (*configDoc, error) {
	specs, err := decodeLenient(data)
	if err != nil {
		return nil, err
	}
	st, err := tomledit.Scan(data)
	if err != nil {
		return nil, err
	}
	doc := &configDoc{stmts: st, specs: specs, nl: tomledit.Newline(data)}
	inTable := false // after the first header: keys are no longer the root table's
	open := -1       // the block whose statements are being read
	var limits []int // for each block, the header that ends it (or len(st))
	closeBlock := func(at int) {
		if open >= 0 {
			limits = append(limits, at)
			open = -1
		}
	}
	for i, s := range st {
		switch {
		case s.Kind == tomledit.KeyValue && !inTable && s.Key[0] == "servers":
			return nil, fmt.Errorf("line %d: servers is written as a value (servers = [...]); switchboard edits [[servers]] tables only: rewrite the entries as [[servers]] tables, or edit them by hand", s.Line)
		case s.Kind != tomledit.Header:
			continue
		}
		inTable = true
		isServers := s.Key[0] == "servers"
		switch {
		case isServers && len(s.Key) == 1 && s.Array:
			closeBlock(i)
			doc.blocks = append(doc.blocks, serverBlock{header: i, own: -1})
			open = len(doc.blocks) - 1
		case isServers && len(s.Key) == 1:
			return nil, fmt.Errorf("line %d: [servers] is a table; each server is a [[servers]] entry (two brackets)", s.Line)
		case isServers && open < 0:
			return nil, fmt.Errorf("line %d: [%s] is away from its [[servers]] entry (TOML adds it to the last entry above); move it directly under that entry, then run this again", s.Line, strings.Join(s.Key, "."))
		case isServers:
			if doc.blocks[open].own < 0 {
				doc.blocks[open].own = i
			}
		default:
			closeBlock(i)
		}
	}
	closeBlock(len(st))
	if len(doc.blocks) != len(specs) {
		return nil, fmt.Errorf("the config's servers are written in a form switchboard does not edit (found %d [[servers]] headers for %d servers); edit them by hand", len(doc.blocks), len(specs))
	}
	for b := range doc.blocks {
		blk := &doc.blocks[b]
		limit := limits[b]
		if blk.own < 0 {
			blk.own = limit
		}
		lastKey := blk.header
		for j := blk.header + 1; j < limit; j++ {
			if k := st[j].Kind; k == tomledit.Header || k == tomledit.KeyValue {
				lastKey = j
			}
		}
		blk.last = lastKey
		if limit < len(st) {
			// comment lines directly above the next header are that table's
			k := limit - 1
			for k > lastKey && st[k].Kind == tomledit.Comment {
				k--
			}
			for j := k; j > lastKey; j-- {
				if st[j].Kind == tomledit.Comment {
					blk.last = j
					break
				}
			}
		} else {
			// at the end of the file, comments after a blank line are the file's footer
			from := limit - 1
			for j := limit - 1; j > lastKey; j-- {
				if st[j].Kind == tomledit.Blank {
					from = j
					break
				}
			}
			for j := from; j > lastKey; j-- {
				if st[j].Kind == tomledit.Comment {
					blk.last = j
					break
				}
			}
		}
	}
	return doc, nil
}

// checkEdit decodes before and after, takes the entry named name out of both, and requires the
// rest to be equal; check judges the entry itself (nil when absent).
func checkEdit(before, after []byte, name string, check func(was, got map[string]any) error) error {
	fail := func(why string) error {
		return fmt.Errorf("internal error: switchboard cannot edit servers %q in this file safely (%s); nothing written: edit the file by hand", name, why)
	}
	b, err := decodeMap(before)
	if err != nil {
		return err
	}
	a, err := decodeMap(after)
	if err != nil {
		return fail("the result " + err.Error())
	}
	was := takeServer(b, name)
	got := takeServer(a, name)
	if !reflect.DeepEqual(a, b) {
		return fail("the edit would change other settings")
	}
	if err := check(was, got); err != nil {
		return fail(err.Error())
	}
	return nil
}

func decodeMap(data []byte) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, tomledit.ParseError(err)
	}
	return m, nil
}

// takeServer removes the server named name from a decoded file and returns it; an emptied
// servers array is removed too.
func takeServer(m map[string]any, name string) map[string]any {
	list, _ := m["servers"].([]map[string]any)
	var rest []map[string]any
	var found map[string]any
	for _, e := range list {
		if e["name"] == name && found == nil {
			found = e
			continue
		}
		rest = append(rest, e)
	}
	if len(rest) == 0 {
		delete(m, "servers")
	} else {
		m["servers"] = rest
	}
	return found
}

// sameSpec compares specs as the file holds them: empty and absent lists and maps are the same,
// and so are an unset and a true enabled.
func sameSpec(a, b Spec) bool {
	norm := func(s Spec) Spec {
		if len(s.Args) == 0 {
			s.Args = nil
		}
		if len(s.Env) == 0 {
			s.Env = nil
		}
		if len(s.Headers) == 0 {
			s.Headers = nil
		}
		if len(s.EnvPassthrough) == 0 {
			s.EnvPassthrough = nil
		}
		on := s.IsEnabled()
		s.Enabled = &on
		return s
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// ---- writing an entry ----

// maxLine is the width beyond which args are written one per line, and env or headers with more
// than maxInline keys as a sub-table: the inline forms stay on one line (TOML 1.0 readers need
// inline tables on one line).
const (
	maxLine   = 100
	maxInline = 3
)

// renderSpec is s as a [[servers]] block.
func renderSpec(s Spec, nl string) string {
	var b strings.Builder
	kv := func(k, v string) { b.WriteString(k + " = " + v + nl) }
	b.WriteString("[[servers]]" + nl)
	kv("name", tomledit.Quote(s.Name))
	if s.Command != "" {
		kv("command", tomledit.Quote(s.Command))
	}
	if len(s.Args) > 0 {
		q := make([]string, len(s.Args))
		for i, a := range s.Args {
			q[i] = tomledit.Quote(a)
		}
		if one := "[" + strings.Join(q, ", ") + "]"; len("args = ")+len(one) <= maxLine {
			kv("args", one)
		} else {
			kv("args", "["+nl+"  "+strings.Join(q, ","+nl+"  ")+","+nl+"]")
		}
	}
	var subs []string
	table := func(key string, m map[string]string) {
		if len(m) == 0 {
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = tomledit.Key(k) + " = " + tomledit.Quote(m[k])
		}
		if one := "{ " + strings.Join(pairs, ", ") + " }"; len(keys) <= maxInline && len(key)+3+len(one) <= maxLine {
			kv(key, one)
			return
		}
		subs = append(subs, "[servers."+key+"]"+nl+strings.Join(pairs, nl)+nl)
	}
	table("env", s.Env)
	if s.Cwd != "" {
		kv("cwd", tomledit.Quote(s.Cwd))
	}
	if s.URL != "" {
		kv("url", tomledit.Quote(s.URL))
	}
	if s.Transport != "" {
		kv("transport", tomledit.Quote(s.Transport))
	}
	table("headers", s.Headers)
	if s.TLSFingerprint != "" {
		kv("tls_fingerprint", tomledit.Quote(s.TLSFingerprint))
	}
	if o := s.OAuth; o != nil {
		var parts []string
		if o.ClientID != "" {
			parts = append(parts, "client_id = "+tomledit.Quote(o.ClientID))
		}
		if o.ClientSecret != "" {
			parts = append(parts, "client_secret = "+tomledit.Quote(o.ClientSecret))
		}
		if len(o.Scopes) > 0 {
			q := make([]string, len(o.Scopes))
			for i, a := range o.Scopes {
				q[i] = tomledit.Quote(a)
			}
			parts = append(parts, "scopes = ["+strings.Join(q, ", ")+"]")
		}
		kv("oauth", "{ "+strings.Join(parts, ", ")+" }")
	}
	if s.Start != "" {
		kv("start", tomledit.Quote(s.Start))
	}
	if !s.IsEnabled() {
		kv("enabled", "false")
	}
	quoteList := func(list []string) string {
		q := make([]string, len(list))
		for i, a := range list {
			q[i] = tomledit.Quote(a)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	if len(s.EnvPassthrough) > 0 {
		kv("env_passthrough", quoteList(s.EnvPassthrough))
	}
	if sb := s.Sandbox; sb != nil {
		if sb.Off {
			kv("sandbox", tomledit.Quote("off"))
		} else {
			var t strings.Builder
			t.WriteString("[servers.sandbox]" + nl)
			if len(sb.Read) > 0 {
				t.WriteString("read = " + quoteList(sb.Read) + nl)
			}
			if len(sb.Write) > 0 {
				t.WriteString("write = " + quoteList(sb.Write) + nl)
			}
			if sb.Network != nil {
				t.WriteString(fmt.Sprintf("network = %t", *sb.Network) + nl)
			}
			subs = append(subs, t.String())
		}
	}
	for _, sub := range subs { // sub-tables after every key of the entry's own table
		b.WriteString(sub)
	}
	return b.String()
}
