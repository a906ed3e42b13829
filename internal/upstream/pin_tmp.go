package upstream

// TEMPORARY until pin.go lands (helper branch wip-secrets).

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func PinnedDefinition(t *sdk.Tool) []byte {
	b, _ := json.Marshal(map[string]any{"name": t.Name, "title": t.Title, "description": t.Description, "inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "annotations": t.Annotations})
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.MarshalIndent(v, "", "  ")
	return out
}

func ToolHash(t *sdk.Tool) string {
	h := sha256.Sum256(PinnedDefinition(t))
	return hex.EncodeToString(h[:])
}

func DefinitionDiff(old, new []byte) string { return "- " + string(old) + "\n+ " + string(new) }

func Flags(t *sdk.Tool) []string { return nil }
