package app

import "testing"

func TestControlTableIsValid(t *testing.T) {
	if err := ValidateControls(); err != nil {
		t.Fatal(err)
	}
}

// The OAuth controls the Settings view and the approvals panel use: RevokeGrant by the grant's
// id in the path, Grants to list them, DecideApproval taking the toolsets granted.
func TestControlTableDeclaresGrantControls(t *testing.T) {
	want := map[string]string{
		"Grants":         "GET /api/grants",
		"RevokeGrant":    "POST /api/grants/{id}/revoke",
		"DecideApproval": "POST /api/approvals/{id}",
	}
	found := map[string]bool{}
	for _, s := range ControlSpecs() {
		route, ok := want[s.Name]
		if !ok {
			continue
		}
		found[s.Name] = true
		if got := s.Method + " " + s.Path; got != route {
			t.Errorf("%s: route %q, want %q", s.Name, got, route)
		}
		if s.Name == "DecideApproval" {
			var names []string
			for _, a := range s.Args {
				names = append(names, a.Name)
			}
			if len(names) != 3 || names[2] != "scopes" {
				t.Errorf("DecideApproval's arguments %v, want id, decision, scopes", names)
			}
		}
	}
	for name := range want {
		if !found[name] {
			t.Errorf("control %s is not declared", name)
		}
	}
}
