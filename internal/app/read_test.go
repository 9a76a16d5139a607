package app

import (
	"context"
	"testing"
)

// Related follows links both ways: the entries an entry names, and the
// entries that name it, archived ones included.
func TestRelatedFollowsLinksBothWays(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	base, err := s.Memory().Save(ctx, SaveRequest{Content: "the billing worker retries 3 times"})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := s.Memory().Save(ctx, SaveRequest{Content: "retries back off exponentially"})
	child, err := s.Memory().Save(ctx, SaveRequest{Content: "see the retry insight", Related: []string{base.ID[:8], other.ID}})
	if err != nil {
		t.Fatal(err)
	}
	archived, _ := s.Memory().Save(ctx, SaveRequest{Content: "an old note on retries", Related: []string{base.ID}})
	if _, err := s.Memory().SetArchived(ctx, archived.ID, true); err != nil {
		t.Fatal(err)
	}
	s.Memory().Save(ctx, SaveRequest{Content: "unrelated"})

	r, err := s.Recall().Related(ctx, base.ID[:8])
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != base.ID || len(r.Links) != 0 || len(r.Backlinks) != 2 {
		t.Fatalf("base: %s links %d backlinks %+v", r.ID, len(r.Links), r.Backlinks)
	}
	got := map[string]bool{r.Backlinks[0].ID: true, r.Backlinks[1].ID: true}
	if !got[child.ID] || !got[archived.ID] {
		t.Fatalf("backlinks %+v, want %s and %s", r.Backlinks, child.ID, archived.ID)
	}
	r, err = s.Recall().Related(ctx, child.ID)
	if err != nil || len(r.Links) != 2 || len(r.Backlinks) != 0 {
		t.Fatalf("child: %+v %v", r, err)
	}
	if _, err := s.Recall().Related(ctx, "ffffffff"); err == nil {
		t.Fatal("an unknown id had relations")
	}
}

// Rules carry their labels, whoever saved them, and a label or an id
// deletes (archives) them.
func TestRuleLabels(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	r, err := s.Agent().SaveRule(ctx, RuleRequest{Label: "No Force Push", Content: "never force-push main", AgentID: "mcp"})
	if err != nil || r.Label != "no-force-push" {
		t.Fatalf("save: %+v %v", r, err)
	}
	plain, _ := s.Memory().Save(ctx, SaveRequest{Content: "run go vet before pushing", Type: "rule"})
	if _, err := s.Agent().SaveRule(ctx, RuleRequest{Label: "  ", Content: "x"}); err == nil {
		t.Fatal("an empty label was accepted")
	}
	rules, err := s.Agent().Rules(ctx, 0)
	if err != nil || len(rules) != 2 {
		t.Fatalf("rules: %+v %v", rules, err)
	}
	labels := map[string]string{}
	for _, x := range rules {
		labels[x.ID] = x.Label
	}
	if labels[r.ID] != "no-force-push" || labels[plain.ID] != "" {
		t.Fatalf("labels: %v", labels)
	}
	if ids, err := s.Agent().DeleteRules(ctx, "no force push"); err != nil || len(ids) != 1 || ids[0] != r.ID {
		t.Fatalf("delete by label: %v %v", ids, err)
	}
	if ids, err := s.Agent().DeleteRules(ctx, plain.ID[:8]); err != nil || len(ids) != 1 {
		t.Fatalf("delete by id: %v %v", ids, err)
	}
	if rules, _ := s.Agent().Rules(ctx, 0); len(rules) != 0 {
		t.Fatalf("deleted rules still listed: %+v", rules)
	}
}
