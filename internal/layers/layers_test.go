package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/git-synaptic/git-synaptic"

// floors places every package of the module (as package doc.go draws it).
var floors = map[string]int{
	"notes": 0, "cochange": 0, "timeexpr": 0, "internal/memfile": 0, "internal/agents": 0, "internal/directive": 0,
	"internal/regular": 0, "internal/atomicfile": 0, "internal/lockfile": 0,

	"gitstore": 1, "cache": 1, "rank": 1, "embed": 1, "embed/purego": 1, "hooks": 1, "registry": 1,
	"internal/secrets": 1,

	"internal/app": 2, "internal/memlog": 2,

	"internal/frontend/cli": 3, "internal/frontend/mcp": 3, "internal/frontend/web": 3, "internal/frontend/agenthook": 3,
	"internal/config": 3, "internal/daemon": 3, "internal/agentsetup": 3,

	"cmd/git-synaptic": 4, "cmd/git-synaptic-mcp": 4, "internal/manpages": 4, "internal/bench": 4,
	"internal/eval/cochange": 4, "internal/eval/locomo": 4, "internal/testrepo": 4, "internal/testrepo/golden": 4, "internal/evaldata": 4, "internal/memlog/memlogtest": 4,
	"internal/layers": 4,
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
			case floor == 3 && df == 1:
				t.Errorf("front end %s imports %s: front ends reach storage and engines through internal/app", pkg, dep)
			}
		}
	}
	if seen < len(floors)-2 {
		t.Errorf("go list named %d of the %d placed packages", seen, len(floors))
	}
}
