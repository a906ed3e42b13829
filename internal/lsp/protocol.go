package lsp

import (
	"encoding/json"
	"strings"
)

// The subset of the Language Server Protocol (3.17) the hub speaks, written out by hand: the
// maintained Go bindings are either internal to gopls or follow LSP 3.16 and bring a logging
// framework with them (docs/architecture.md, "Code intelligence").

// Position is a zero-based line and a character offset in UTF-16 code units (the protocol's
// default position encoding), unless the server agreed to another (Client.Encoding).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span from Start to End (exclusive).
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// locationLink is what servers that support links answer instead of Location.
type locationLink struct {
	TargetURI            string `json:"targetUri"`
	TargetRange          Range  `json:"targetRange"`
	TargetSelectionRange Range  `json:"targetSelectionRange"`
}

// decodeLocations reads a Location, a []Location or a []LocationLink (null: none).
func decodeLocations(raw json.RawMessage) ([]Location, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if strings.HasPrefix(s, "{") {
		var l Location
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, err
		}
		return []Location{l}, nil
	}
	var items []struct {
		Location
		locationLink
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		if it.TargetURI != "" {
			out = append(out, Location{URI: it.TargetURI, Range: it.TargetSelectionRange})
		} else {
			out = append(out, it.Location)
		}
	}
	return out, nil
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// TextDocumentItem is an opened document with its text.
type TextDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

// VersionedTextDocumentIdentifier names a document at a version.
type VersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

// TextDocumentPositionParams is a position in a document.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

type referenceParams struct {
	TextDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// Diagnostic is one problem a server reports.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// SymbolKind is the protocol's symbol kind number.
type SymbolKind int

var symbolKindNames = [...]string{"", "file", "module", "namespace", "package", "class", "method", "property",
	"field", "constructor", "enum", "interface", "function", "variable", "constant", "string", "number",
	"boolean", "array", "object", "key", "null", "enumMember", "struct", "event", "operator", "typeParameter"}

// String is the kind's name as the protocol spells it (lower camel case).
func (k SymbolKind) String() string {
	if k > 0 && int(k) < len(symbolKindNames) {
		return symbolKindNames[k]
	}
	return "unknown"
}

// DocumentSymbol is one entry of a document's outline (hierarchical form).
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           SymbolKind       `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
}

// SymbolInformation is a symbol with its location (the flat form of outlines and the answer
// to workspace/symbol). A WorkspaceSymbol's location may lack a range (then it is zero).
type SymbolInformation struct {
	Name          string     `json:"name"`
	Kind          SymbolKind `json:"kind"`
	Location      Location   `json:"location"`
	ContainerName string     `json:"containerName,omitempty"`
}

// MarkupContent is text in plaintext or markdown.
type MarkupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// decodeHoverContents reads a hover's contents: MarkupContent, a MarkedString or an array of
// MarkedStrings, as one text.
func decodeHoverContents(raw json.RawMessage) string {
	var mc MarkupContent
	if err := json.Unmarshal(raw, &mc); err == nil && mc.Kind != "" {
		return mc.Value
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	type marked struct {
		Language string `json:"language"`
		Value    string `json:"value"`
	}
	var m marked
	if err := json.Unmarshal(raw, &m); err == nil && m.Value != "" {
		return "```" + m.Language + "\n" + m.Value + "\n```"
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err == nil {
		var parts []string
		for _, a := range arr {
			if t := decodeHoverContents(a); t != "" {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n\n")
	}
	return ""
}

// CallHierarchyItem is a function, method or constructor in a call hierarchy.
type CallHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           SymbolKind      `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            string          `json:"uri"`
	Range          Range           `json:"range"`
	SelectionRange Range           `json:"selectionRange"`
	Data           json.RawMessage `json:"data,omitempty"`
}

// Call is one edge of a call hierarchy: the other end (the caller of an incoming call, the
// callee of an outgoing one) and the ranges of the calls.
type Call struct {
	Item       CallHierarchyItem
	FromRanges []Range
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is a set of changes to documents: text edits per document and, for servers
// that use documentChanges, file creations, renames and deletions.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage     `json:"documentChanges,omitempty"`
}

// FileOp is a resource operation of a WorkspaceEdit (create, rename, delete).
type FileOp struct {
	Kind   string `json:"kind"`
	URI    string `json:"uri,omitempty"`
	OldURI string `json:"oldUri,omitempty"`
	NewURI string `json:"newUri,omitempty"`
}

// DocumentEdits are the text edits of one document.
type DocumentEdits struct {
	URI   string
	Edits []TextEdit
}

// Flatten lists the edit's text edits per document in order, and its file operations.
func (w WorkspaceEdit) Flatten() ([]DocumentEdits, []FileOp, error) {
	var docs []DocumentEdits
	var ops []FileOp
	for _, raw := range w.DocumentChanges {
		var probe struct {
			Kind         string                          `json:"kind"`
			TextDocument VersionedTextDocumentIdentifier `json:"textDocument"`
			Edits        []TextEdit                      `json:"edits"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, nil, err
		}
		if probe.Kind != "" {
			var op FileOp
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, nil, err
			}
			ops = append(ops, op)
			continue
		}
		docs = append(docs, DocumentEdits{URI: probe.TextDocument.URI, Edits: probe.Edits})
	}
	if len(w.DocumentChanges) == 0 {
		for uri, edits := range w.Changes {
			docs = append(docs, DocumentEdits{URI: uri, Edits: edits})
		}
	}
	return docs, ops, nil
}

// File change types of workspace/didChangeWatchedFiles.
const (
	FileCreated = 1
	FileChanged = 2
	FileDeleted = 3
)

// FileEvent is one file change seen on disk.
type FileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}
