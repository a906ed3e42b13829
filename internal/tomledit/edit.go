package tomledit

// The general edits: set or remove one key of a table, and replace a whole array of tables.
// Each one works on the statements Scan finds and checks its result by decoding it: the file
// must decode as before with the intended change made, and nothing else (an emptied table may
// disappear). An edit that would change anything else is refused and nothing is written.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Pair is one key of a table as an edit writes it. Value is a string, bool, int, int64, []string
// or map[string]string (written as an inline table, keys sorted).
type Pair struct {
	Key   string
	Value any
}

// Entry is one table of an array of tables, as ReplaceTables writes it.
type Entry struct {
	// Origin is the position (0-based) of the existing entry this one comes from, or -1 for a
	// new one. An entry that decodes exactly as its origin keeps its text byte for byte,
	// comments included (moved when the list was reordered); a changed one is written anew
	// below the comment lines above the origin's header. An entry with Origin -1 that equals an
	// existing entry no other entry claims keeps that entry's text too.
	Origin int
	Pairs  []Pair
}

// maxLine is the width beyond which an array value is written one element per line.
const maxLine = 100

// Set returns data with key set to v in table (nil: the top-level table). An existing key keeps
// its place and any comment after its value; a new key goes after the table's last key (a new
// top-level key above the first table, a new table at the end of the file). A key that already
// holds v leaves the file as it is.
func Set(data []byte, table []string, key string, v any) ([]byte, error) {
	what := dotted(append(slices.Clone(table), key))
	d, before, err := parse(data)
	if err != nil {
		return nil, err
	}
	text, want, err := renderValue(len(key)+3, v, d.nl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if cur, ok := lookup(before, append(slices.Clone(table), key)); ok && reflect.DeepEqual(cur, want) {
		return data, nil
	}
	if err := d.checkForm(table); err != nil {
		return nil, err
	}
	var out []byte
	if hdr, ok := d.findTable(table); ok {
		lo, hi := d.section(hdr)
		if i := d.findKey(lo, hi, key); i >= 0 {
			s := d.st[i]
			out = slices.Concat(data[:s.ValStart], []byte(text), data[s.ValEnd:])
		} else {
			out = d.insertKey(hdr, lo, hi, Key(key)+" = "+text)
		}
	} else {
		out = d.appendText("[" + dotted(table) + "]" + d.nl + Key(key) + " = " + text + d.nl)
	}
	if err := verify(what, data, out, func(m map[string]any) error { return setPath(m, table, key, want) }); err != nil {
		return nil, err
	}
	return out, nil
}

// Delete returns data without key in table (nil: the top-level table): its line goes, a comment
// on that line with it; comment lines above it stay. An absent key leaves the file as it is.
func Delete(data []byte, table []string, key string) ([]byte, error) {
	what := dotted(append(slices.Clone(table), key))
	d, before, err := parse(data)
	if err != nil {
		return nil, err
	}
	if _, ok := lookup(before, append(slices.Clone(table), key)); !ok {
		return data, nil
	}
	if err := d.checkForm(table); err != nil {
		return nil, err
	}
	hdr, ok := d.findTable(table)
	i := -1
	if ok {
		lo, hi := d.section(hdr)
		i = d.findKey(lo, hi, key)
	}
	if i < 0 {
		return nil, fmt.Errorf("%s is written in a form switchboard does not edit (not as a key of [%s]); edit the file by hand", what, dotted(table))
	}
	out := slices.Concat(data[:d.st[i].Start], data[d.st[i].End:])
	if err := verify(what, data, out, func(m map[string]any) error { deletePath(m, table, key); return nil }); err != nil {
		return nil, err
	}
	return out, nil
}

// ReplaceTables returns data with the array of tables at path (e.g. policy.rules, written
// [[policy.rules]]) replaced by entries, in their order. The new list takes the place of the
// existing one. The comment lines directly above an entry's header are the entry's: they move
// with it, stay above it when it is rewritten and go when it is removed (a heading for the whole
// list stays where it is when a blank line separates it from the first entry). With no existing
// entry the list goes after the parent table's keys ([policy] for policy.rules), else at the end
// of the file. No entries removes the array.
func ReplaceTables(data []byte, path []string, entries []Entry) ([]byte, error) {
	what := dotted(path)
	d, before, err := parse(data)
	if err != nil {
		return nil, err
	}
	var orig []map[string]any
	if v, ok := lookup(before, path); ok {
		if orig, ok = v.([]map[string]any); !ok {
			return nil, fmt.Errorf("%s is not written as [[%s]] tables; rewrite it so, or edit the file by hand", what, what)
		}
	}
	if err := d.checkForm(path); err != nil {
		return nil, err
	}
	blocks, err := d.arrayBlocks(path)
	if err != nil {
		return nil, err
	}
	if len(blocks) != len(orig) {
		return nil, fmt.Errorf("%s is written in a form switchboard does not edit (%d [[%s]] headers for %d entries); edit the file by hand", what, len(blocks), what, len(orig))
	}

	// Render every entry and decide which existing text it keeps.
	texts := make([]string, len(entries))
	want := make([]map[string]any, len(entries))
	claim := make([]int, len(entries))
	taken := make([]bool, len(orig))
	for i, e := range entries {
		texts[i] = renderEntry(path, e.Pairs, d.nl)
		v, err := decodeEntry(path, texts[i])
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", what, i+1, err)
		}
		want[i] = v
		claim[i] = -1
		if e.Origin >= 0 && e.Origin < len(orig) && !taken[e.Origin] {
			claim[i], taken[e.Origin] = e.Origin, true
		}
	}
	for i, e := range entries {
		if claim[i] >= 0 || e.Origin >= 0 && e.Origin < len(orig) {
			continue
		}
		for j := range orig {
			if !taken[j] && reflect.DeepEqual(orig[j], want[i]) {
				claim[i], taken[j] = j, true
				break
			}
		}
	}
	expect := make([]map[string]any, len(entries))
	for i := range entries {
		expect[i] = want[i]
		j := claim[i]
		switch {
		case j < 0:
		case reflect.DeepEqual(orig[j], want[i]):
			texts[i] = d.blockText(blocks, j)
			expect[i] = orig[j]
		default: // changed: written anew under the comment lines that were above it
			texts[i] = string(d.data[d.st[blocks[j].first].Start:d.st[blocks[j].hdr].Start]) + texts[i]
		}
	}
	sep := d.nl // a blank line between entries, unless the file writes them without one
	if len(blocks) >= 2 && !d.hasBlank(blocks[0].last+1, blocks[1].first) {
		sep = ""
	}
	text := strings.Join(texts, sep)

	var out []byte
	if len(blocks) == 0 {
		if text == "" {
			return data, nil
		}
		out = d.insertTables(path[:len(path)-1], text)
	} else {
		out = d.replaceBlocks(blocks, text)
	}
	if err := verify(what, data, out, func(m map[string]any) error {
		if len(expect) == 0 {
			deletePath(m, path[:len(path)-1], path[len(path)-1])
			return nil
		}
		return setPath(m, path[:len(path)-1], path[len(path)-1], expect)
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// ---- the document ----

type doc struct {
	data []byte
	st   []Stmt
	nl   string
	// owner[i] is the header statement i is under (-1: the top-level table); a header's own
	// index for a header.
	owner []int
}

func parse(data []byte) (*doc, map[string]any, error) {
	m, err := decodeMap(data)
	if err != nil {
		return nil, nil, err
	}
	st, err := Scan(data)
	if err != nil {
		return nil, nil, err
	}
	d := &doc{data: data, st: st, nl: Newline(data), owner: make([]int, len(st))}
	cur := -1
	for i, s := range st {
		if s.Kind == Header {
			cur = i
		}
		d.owner[i] = cur
	}
	return d, m, nil
}

// headerKey is the key of the header statement h (nil for -1, the top-level table).
func (d *doc) headerKey(h int) []string {
	if h < 0 {
		return nil
	}
	return d.st[h].Key
}

// checkForm refuses a table (or array of tables) written in a form these edits cannot follow:
// as an inline value (tcp = { ... }, rules = [ ... ]) or with dotted keys from a table above it
// (tcp.enabled = true at the top), or as the other kind of header.
func (d *doc) checkForm(table []string) error {
	if len(table) == 0 {
		return nil
	}
	name := dotted(table)
	for i, s := range d.st {
		switch s.Kind {
		case Header:
			if slices.Equal(s.Key, table) && s.Array != d.wantArray(table) {
				return fmt.Errorf("line %d: %s is written as [%s]; switchboard expects it as %s: rewrite it so, or edit the file by hand", s.Line, name, brackets(s), d.wantHeader(table))
			}
		case KeyValue:
			owner := d.headerKey(d.owner[i])
			full := append(slices.Clone(owner), s.Key...)
			if len(owner) < len(table) && slices.Equal(owner, table[:len(owner)]) && (hasPrefix(full, table) || hasPrefix(table, full)) {
				return fmt.Errorf("line %d: %s is written as the value %s; switchboard edits it only as %s: rewrite it so, or edit the file by hand", s.Line, name, dotted(s.Key), d.wantHeader(table))
			}
		}
	}
	return nil
}

// wantArray reports whether table is expected as an array of tables: it is one when any header
// writes it so (ReplaceTables's path), else a plain table.
func (d *doc) wantArray(table []string) bool {
	for _, s := range d.st {
		if s.Kind == Header && s.Array && slices.Equal(s.Key, table) {
			return true
		}
	}
	return false
}

func (d *doc) wantHeader(table []string) string {
	if d.wantArray(table) {
		return "[[" + dotted(table) + "]] tables"
	}
	return "a [" + dotted(table) + "] table"
}

func brackets(s Stmt) string {
	if s.Array {
		return "[" + dotted(s.Key) + "]"
	}
	return dotted(s.Key)
}

// findTable is the [table] header's statement (-1 and true for the top-level table).
func (d *doc) findTable(table []string) (int, bool) {
	if len(table) == 0 {
		return -1, true
	}
	for i, s := range d.st {
		if s.Kind == Header && !s.Array && slices.Equal(s.Key, table) {
			return i, true
		}
	}
	return -1, false
}

// section is the statements of a table's own keys: after its header up to the next header.
func (d *doc) section(hdr int) (lo, hi int) {
	lo = hdr + 1
	hi = lo
	for hi < len(d.st) && d.st[hi].Kind != Header {
		hi++
	}
	return lo, hi
}

func (d *doc) findKey(lo, hi int, key string) int {
	for i := lo; i < hi; i++ {
		if s := d.st[i]; s.Kind == KeyValue && len(s.Key) == 1 && s.Key[0] == key {
			return i
		}
	}
	return -1
}

// insertKey adds line (without its newline) to the table whose header is hdr and whose own
// statements are [lo, hi): after its last key, indented like it; in a table without keys right
// after the header; at the top level without keys, above the first table and the comment lines
// directly above it, with a blank line between.
func (d *doc) insertKey(hdr, lo, hi int, line string) []byte {
	last := -1
	for i := lo; i < hi; i++ {
		if d.st[i].Kind == KeyValue {
			last = i
		}
	}
	switch {
	case last >= 0:
		return d.insertAfter(d.st[last].End, LeadingSpace(d.data[d.st[last].Start:])+line+d.nl)
	case hdr >= 0:
		return d.insertAfter(d.st[hdr].End, line+d.nl)
	case hi == len(d.st): // no table at all
		return d.appendText(line + d.nl)
	}
	at := hi
	for at > 0 && d.st[at-1].Kind == Comment {
		at--
	}
	pos := d.st[at].Start
	return slices.Concat(d.data[:pos], []byte(line+d.nl+d.nl), d.data[pos:])
}

// insertAfter inserts text at pos, the end of a statement (which may lack its newline at the
// end of the file).
func (d *doc) insertAfter(pos int, text string) []byte {
	if pos > 0 && d.data[pos-1] != '\n' {
		text = d.nl + text
	}
	return slices.Concat(d.data[:pos], []byte(text), d.data[pos:])
}

// appendText adds text at the end of the file, after a blank line unless the file is empty or
// already ends with one.
func (d *doc) appendText(text string) []byte {
	var b bytes.Buffer
	b.Write(d.data)
	if len(bytes.TrimSpace(d.data)) > 0 {
		if !bytes.HasSuffix(d.data, []byte("\n")) {
			b.WriteString(d.nl)
		}
		if !EndsWithBlankLine(d.data) {
			b.WriteString(d.nl)
		}
	}
	b.WriteString(text)
	return b.Bytes()
}

func (d *doc) hasBlank(lo, hi int) bool {
	for i := lo; i < hi && i < len(d.st); i++ {
		if d.st[i].Kind == Blank {
			return true
		}
	}
	return false
}

// block is one entry of an array of tables as statements.
type block struct {
	first int // the first statement: the comment lines directly above the header, or the header
	hdr   int // its [[header]]
	last  int // its last statement: keys, sub-tables, comment lines right after them
}

// arrayBlocks finds the entries of the array of tables at path. An entry runs from its header
// through its keys and sub-tables ([policy.rules.args] under [[policy.rules]]) and the comment
// lines right after its last key (no blank line between) that do not stand directly above the
// next header; the comment lines directly above its header are its own too.
func (d *doc) arrayBlocks(path []string) ([]block, error) {
	var out []block
	open := false
	var limits []int
	for i, s := range d.st {
		if s.Kind != Header {
			continue
		}
		switch {
		case s.Array && slices.Equal(s.Key, path):
			if open {
				limits = append(limits, i)
			}
			out = append(out, block{hdr: i})
			open = true
		case len(s.Key) > len(path) && hasPrefix(s.Key, path):
			if !open {
				return nil, fmt.Errorf("line %d: [%s] is away from its [[%s]] entry (TOML adds it to the last entry above); move it directly under that entry, or edit the file by hand", s.Line, dotted(s.Key), dotted(path))
			}
		default:
			if open {
				limits = append(limits, i)
				open = false
			}
		}
	}
	if open {
		limits = append(limits, len(d.st))
	}
	for k := range out {
		b := &out[k]
		limit := limits[k]
		b.last = b.hdr
		for j := b.hdr + 1; j < limit; j++ {
			if kind := d.st[j].Kind; kind == KeyValue || kind == Header {
				b.last = j
			}
		}
		j := b.last + 1
		for j < limit && d.st[j].Kind == Comment {
			j++
		}
		if j == len(d.st) || j < limit && d.st[j].Kind == Blank {
			b.last = j - 1 // comment lines right after the entry, not directly above the next header
		}
		b.first = b.hdr // and the comment lines directly above it
		floor := -1
		if k > 0 {
			floor = out[k-1].last
		}
		for b.first-1 > floor && d.st[b.first-1].Kind == Comment {
			b.first--
		}
	}
	return out, nil
}

// blockText is entry k's text as it stands, with the comment lines above its header, ending with
// a newline.
func (d *doc) blockText(blocks []block, k int) string {
	t := string(d.data[d.st[blocks[k].first].Start:d.st[blocks[k].last].End])
	if !strings.HasSuffix(t, "\n") {
		t += d.nl
	}
	return t
}

// replaceBlocks puts text in place of the first entry and removes the others, each with the
// blank lines before it (the list's own separators).
func (d *doc) replaceBlocks(blocks []block, text string) []byte {
	type cut struct {
		from, to int
		text     string
	}
	var cuts []cut
	for k, b := range blocks {
		from := b.first
		floor := -1
		if k > 0 {
			floor = blocks[k-1].last
		}
		if k > 0 || text == "" {
			for from-1 > floor && d.st[from-1].Kind == Blank {
				from--
			}
		}
		to := b.last + 1
		if from == 0 && text == "" { // nothing above: no blank line at the top of the file either
			for to < len(d.st) && d.st[to].Kind == Blank {
				to++
			}
		}
		c := cut{from: d.st[from].Start, to: len(d.data), text: ""}
		if to < len(d.st) {
			c.to = d.st[to].Start
		}
		if k == 0 {
			c.text = text
			if text != "" && !bytes.HasSuffix(d.data[:c.to], []byte("\n")) {
				c.text = strings.TrimSuffix(c.text, d.nl) // the file ended without a newline
			}
		}
		cuts = append(cuts, c)
	}
	var out bytes.Buffer
	pos := 0
	for _, c := range cuts {
		out.Write(d.data[pos:c.from])
		out.WriteString(c.text)
		pos = c.to
	}
	out.Write(d.data[pos:])
	return out.Bytes()
}

// insertTables adds the text of a new array of tables after the keys and sub-tables of parent
// (when it has a header), else at the end of the file; blank lines around it.
func (d *doc) insertTables(parent []string, text string) []byte {
	hdr, ok := d.findTable(parent)
	if !ok || hdr < 0 {
		return d.appendText(text)
	}
	last := hdr
	for i := hdr + 1; i < len(d.st); i++ {
		s := d.st[i]
		if s.Kind == Header && !(len(s.Key) > len(parent) && hasPrefix(s.Key, parent)) {
			break
		}
		if s.Kind == KeyValue || s.Kind == Header {
			last = i
		}
	}
	// Comment lines right after the table's last key are the table's (a commented-out setting),
	// unless they stand directly above the next header.
	j := last + 1
	for j < len(d.st) && d.st[j].Kind == Comment {
		j++
	}
	if j == len(d.st) || d.st[j].Kind == Blank {
		last = j - 1
	}
	pos := d.st[last].End
	after := ""
	if pos < len(d.data) && !StartsWithBlankLine(d.data[pos:]) {
		after = d.nl
	}
	return d.insertAfter(pos, d.nl+text+after)
}

// ---- values ----

// renderValue writes v as a TOML value (indent: the width of "key = " before it) and decodes
// what it wrote, which is what the file holds afterwards.
func renderValue(indent int, v any, nl string) (string, any, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = Quote(x)
	case bool:
		text = strconv.FormatBool(x)
	case int:
		text = strconv.Itoa(x)
	case int64:
		text = strconv.FormatInt(x, 10)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = Quote(s)
		}
		text = "[" + strings.Join(q, ", ") + "]"
		if indent+len(text) > maxLine {
			text = "[" + nl + "  " + strings.Join(q, ","+nl+"  ") + "," + nl + "]"
		}
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = Key(k) + " = " + Quote(x[k])
		}
		text = "{}"
		if len(pairs) > 0 {
			text = "{ " + strings.Join(pairs, ", ") + " }"
		}
	default:
		return "", nil, fmt.Errorf("internal error: tomledit cannot write a %T", v)
	}
	m, err := decodeMap([]byte("v = " + text))
	if err != nil {
		return "", nil, fmt.Errorf("internal error: %s does not decode: %w", text, err)
	}
	return text, m["v"], nil
}

// renderEntry writes one [[path]] table.
func renderEntry(path []string, pairs []Pair, nl string) string {
	var b strings.Builder
	b.WriteString("[[" + dotted(path) + "]]" + nl)
	for _, p := range pairs {
		text, _, err := renderValue(len(p.Key)+3, p.Value, nl)
		if err != nil {
			text = Quote(fmt.Sprint(p.Value)) // decodeEntry reports it
		}
		b.WriteString(Key(p.Key) + " = " + text + nl)
	}
	return b.String()
}

func decodeEntry(path []string, text string) (map[string]any, error) {
	m, err := decodeMap([]byte(text))
	if err != nil {
		return nil, err
	}
	v, _ := lookup(m, path)
	list, _ := v.([]map[string]any)
	if len(list) != 1 {
		return nil, errors.New("internal error: an entry does not decode as one table")
	}
	return list[0], nil
}

// ---- checking ----

func decodeMap(data []byte) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, ParseError(err)
	}
	return m, nil
}

// verify decodes before and after, makes the intended change to before, and requires the two
// to be equal (tables left empty count as absent).
func verify(what string, before, after []byte, intend func(map[string]any) error) error {
	fail := func(why string) error {
		return fmt.Errorf("internal error: switchboard cannot change %s in this file safely (%s); nothing written: edit the file by hand", what, why)
	}
	b, err := decodeMap(before)
	if err != nil {
		return err
	}
	a, err := decodeMap(after)
	if err != nil {
		return fail("the result " + err.Error())
	}
	if err := intend(b); err != nil {
		return fail(err.Error())
	}
	prune(a)
	prune(b)
	if !reflect.DeepEqual(a, b) {
		return fail("the edit would change other settings")
	}
	return nil
}

// prune removes tables that hold nothing, at any depth.
func prune(m map[string]any) {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			prune(sub)
			if len(sub) == 0 {
				delete(m, k)
			}
		}
	}
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		t, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = t[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func setPath(m map[string]any, table []string, key string, v any) error {
	for _, p := range table {
		next, ok := m[p]
		if !ok {
			sub := map[string]any{}
			m[p] = sub
			m = sub
			continue
		}
		if m, ok = next.(map[string]any); !ok {
			return fmt.Errorf("%s is not a table", p)
		}
	}
	m[key] = v
	return nil
}

func deletePath(m map[string]any, table []string, key string) {
	for _, p := range table {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, key)
}

func hasPrefix(s, prefix []string) bool {
	return len(s) >= len(prefix) && slices.Equal(s[:len(prefix)], prefix)
}

func dotted(key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = Key(k)
	}
	return strings.Join(parts, ".")
}

// Lookup is the decoded value at path (a table's keys, then the key) and whether the file sets
// it.
func Lookup(data []byte, path ...string) (any, bool, error) {
	m, err := decodeMap(data)
	if err != nil {
		return nil, false, err
	}
	v, ok := lookup(m, path)
	return v, ok, nil
}
