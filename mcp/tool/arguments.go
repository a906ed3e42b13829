package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// ArgumentsText describes a tool's arguments in words for a model reading search results:
// "name (string, required): Who to greet; …".
func ArgumentsText(inputSchema any) string {
	b, err := json.Marshal(inputSchema)
	if err != nil {
		return ""
	}
	var sch struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(b, &sch) != nil || len(sch.Properties) == 0 {
		return "no arguments"
	}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := sch.Properties[n]
		desc := fmt.Sprintf("%s (%v", n, p.Type)
		if slices.Contains(sch.Required, n) {
			desc += ", required"
		}
		desc += ")"
		if p.Description != "" {
			desc += ": " + p.Description
		}
		parts = append(parts, desc)
	}
	return strings.Join(parts, "; ")
}
