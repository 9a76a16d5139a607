package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/git-synaptic/git-synaptic"

// The floors the rule below names.
const (
	storage    = 1
	components = 2
	frontEnds  = 4
)

// floors places every package of the module (as package doc.go draws it).
var floors = map[string]int{
	"memory": 0, "cochange": 0, "timeexpr": 0, "internal/memfile": 0, "internal/agents": 0, "internal/directive": 0,
	"internal/regular": 0, "internal/datadir": 0, "internal/atomicfile": 0, "internal/lockfile": 0, "internal/excerpt": 0,
	"internal/sibling": 0, "internal/offheap": 0,

	"gitstore": 1, "cache": 1, "rank": 1, "embed": 1, "embed/purego": 1, "hooks": 1, "registry": 1,
	"internal/secrets": 1,

	"internal/memlog": 2, "internal/history": 2, "internal/capture": 2,

	"internal/app": 3,

	"internal/frontend/cli": 4, "internal/frontend/mcp": 4, "internal/frontend/web": 4, "internal/frontend/agenthook": 4, "internal/frontend/forward": 4,
	"internal/config": 4, "internal/daemon": 4, "internal/agentsetup": 4,

	"cmd/git-synaptic": 5, "cmd/git-synaptic-core": 5, "cmd/git-synaptic-mcp": 5, "internal/manpages": 5, "internal/bench": 5,
	"internal/eval/cochange": 5, "internal/eval/locomo": 5, "internal/testrepo": 5, "internal/testrepo/golden": 5, "internal/evaldata": 5, "internal/memlog/memlogtest": 5,
	"internal/layers": 5,
}

// Every package imports only packages on lower floors (front ends also
// each other), so that front ends reach storage through the application
// and nothing points back up.
func TestImportsPointDown(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list imports: %v", err)
	}
	cmd := exec.Command(goTool, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		floor, ok := floors[pkg]
		if !ok {
			t.Errorf("package %s has no floor: place it in layers (doc.go and floors)", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if !ours {
				continue
			}
			df, ok := floors[dep]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which has no floor", pkg, dep)
			case df > floor:
				t.Errorf("%s (floor %d) imports %s (floor %d): imports point down", pkg, floor, dep, df)
			case floor == frontEnds && (df == storage || df == components):
				t.Errorf("front end %s imports %s: front ends reach storage, engines and the application's components through internal/app", pkg, dep)
			}
		}
	}
	if seen < len(floors)-2 {
		t.Errorf("go list named %d of the %d placed packages", seen, len(floors))
	}
}
