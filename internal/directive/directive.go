// Package directive tells a standing instruction from what only looks
// like one, by its words: the model-free half of finding corrections
// (the application adds a reading by meaning). Pure: it reads text only.
package directive

import (
	"regexp"
	"strings"
	"sync"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A correction is a standing instruction on how to work: what the user
// told the agent ("Stop adding emojis", "From now on, use pnpm"), or a
// norm of the team ("We never force-push to main", "Tests must use the
// fake clock"). What only looks like one is a statement about the
// system ("Stop words are removed", "The API never returns null"), a
// decision with its reasons ("Use Postgres for billing: ..."), or a
// how-to ("Run the benchmarks with make bench"). Is reads each
// sentence of an entry for one of these forms (measured on
// internal/app/testdata/corrections.jsonl: make eval-corrections).

var (
	// markerRE: phrases that address a standing instruction wherever
	// they stand.
	markerRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(from now on|going forward|in (the )?future,|next time,|next time (you|please)\b|(i|we)( would|'?d)? (prefer|rather)\b|you should(n'?t| not)?\b|keep in mind|please remember|that'?s (wrong|not right|incorrect|not what i)|do this instead|instead, use|you (keep|kept) (forgetting|doing|adding|using|making)|(can|could|would) you (please )?(stop|not|always|never|avoid|quit)\b|(the )?user (wants|asked|prefers|told|said|corrected|does ?n[o']t want)\b|user correction|i (told|asked) you)`)
	})
	// modalRE: a norm: a subject that must or should (not) do something.
	modalRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^([\w .'/-]*?\b(must|should)( not| never| always|n'?t)? \w+|(every|each|all|any) [\w .'/-]*?\b(needs?|requires?|has to|have to)\b)`)
	})
	// reasonRE: a sentence that explains or contrasts states a fact.
	reasonRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i:\b(because|so that|but|although|since|unless|otherwise|or (else|it|the|they|we|you))\b)|\bor [A-Z][a-z]`)
	})
	sentenceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^.!?\n]+[.!?]*`) })
)

// constraints are the imperatives that constrain how to work, whatever the
// entry's type ("only" too, when a verb follows it).
var constraints = map[string]bool{"never": true, "always": true, "don't": true, "dont": true, "do not": true, "avoid": true, "stop": true, "quit": true,
	"make sure": true, "be sure": true, "remember to": true, "remember that": true, "no more": true, "prefer": true}

// imperatives are verbs that start an instruction in the imperative. A
// decision or a reference starting so is the decision or the how-to
// itself; only an insight's or a correction's is taken for an instruction.
var imperatives = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range strings.Fields(`use run write put add ask check commit push pull link call wait try test update remove delete
		rename move create open close read tell include follow split name mark tag document log return wrap prefix start
		leave bump pin squash rebase merge format lint measure fix handle validate store save send set pass give show print
		let install configure import export declare define prefer mention explain describe comment reply answer cite copy
		keep drop replace refactor reuse extend limit cap retry guard lock sort group order stage clean review verify confirm
		build deploy release sign mock stub skip be do go get think look see note double-check`) {
		m[v] = true
	}
	return m
}()

// finite are words that, in a sentence's first clause, show its first
// words to be a subject ("Stop words are removed", "Don't Repeat
// Yourself was cited", "Use of unsafe is limited"), unless a subordinate
// clause holds them ("... when you are touching it").
var finite = map[string]bool{"is": true, "are": true, "was": true, "were": true, "has": true, "have": true, "had": true, "does": true,
	"did": true, "can": true, "will": true, "would": true, "may": true, "might": true, "of": true}

var subordinators = map[string]bool{"that": true, "which": true, "who": true, "when": true, "whenever": true, "if": true, "while": true,
	"where": true, "because": true, "so": true, "until": true, "unless": true, "before": true, "after": true, "you": true}

// declarative reports whether words, a sentence's words after its
// leading verb, are a statement's: a finite verb in its first clause.
func declarative(words []string) bool {
	for _, w := range words {
		switch {
		case w == "," || w == ";" || w == ":" || subordinators[w]:
			return false
		case finite[w]:
			return true
		}
	}
	return false
}

// describes reports whether w, after "always" or "never", makes a
// description ("Always returns an empty slice", "Never seen this") rather
// than an instruction ("Always run", "Never commit").
func describes(w string) bool {
	switch w {
	case "seen", "been", "had", "done", "gone", "was", "were", "is", "are", "knew", "got":
		return true
	}
	return strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss")
}

// Is reports whether text, saved as an entry of type typ, reads
// as a standing instruction (see above).
func Is(text string, typ memory.Type) bool {
	key := string(typ) + "\x00" + text
	directives.Lock()
	d, ok := directives.read[key]
	directives.Unlock()
	if ok {
		return d
	}
	d = readsAsDirective(text, typ)
	directives.Lock()
	if len(directives.read) >= maxDirectiveMemo {
		directives.read = nil
	}
	if directives.read == nil {
		directives.read = map[string]bool{}
	}
	directives.read[key] = d
	directives.Unlock()
	return d
}

// directives remembers Is's answers: a session start reads the
// 500 newest entries with the regular expressions above (about 12 ms at
// 10k entries), and a long-lived process (the warm process, the MCP
// server) reads the same ones again at every start.
var directives struct {
	sync.Mutex
	read map[string]bool
}

// maxDirectiveMemo bounds the answers remembered (each a text's length).
const maxDirectiveMemo = 20000

// readsAsDirective is Is, unremembered.
func readsAsDirective(text string, typ memory.Type) bool {
	if markerRE().MatchString(text) {
		return true
	}
	for _, s := range sentenceRE().FindAllString(text, -1) {
		if sentenceDirective(strings.TrimSpace(s), typ) {
			return true
		}
	}
	return false
}

// sentenceDirective reads one sentence (see Is).
func sentenceDirective(s string, typ memory.Type) bool {
	question := strings.HasSuffix(s, "?")
	// A decision's reasons follow its first clause: only that clause can
	// be a norm ("Branch names must start with the ticket number").
	first := s
	if i := strings.IndexAny(s, ":;—"); i >= 0 {
		first = s[:i]
	}
	if !question && modalRE().MatchString(first) && !reasonRE().MatchString(s) && !strings.Contains(strings.ToLower(first), "should be ") {
		return true
	}
	if question {
		return false
	}
	words := strings.Fields(strings.ToLower(strings.NewReplacer(",", " , ", ":", " : ", ";", " ; ").Replace(s)))
	// A team's practice: "We never force-push", "We don't merge on
	// Fridays" (not "We always had trouble").
	for i := 0; i+2 < len(words); i++ {
		if words[i] == "we" && (words[i+1] == "never" || words[i+1] == "always" || words[i+1] == "don't") && !describes(words[i+2]) {
			return true
		}
	}
	// "Instead of sleeping, wait", "When you open a PR, link the issue":
	// the instruction is the clause after the comma.
	if len(words) > 2 && (words[0] == "instead" && words[1] == "of" || (words[0] == "when" || words[0] == "whenever" || words[0] == "before" || words[0] == "after" || words[0] == "if") && words[1] == "you") {
		for i, w := range words {
			if w == "," && i+1 < len(words) {
				return imperatives[words[i+1]] || constraints[words[i+1]]
			}
		}
		return false
	}
	for len(words) > 1 && (words[0] == "please" || words[0] == "also" || words[0] == "and" || words[0] == "so" || words[0] == "ok" || words[0] == "," || words[0] == "no" && words[1] == ",") {
		words = words[1:]
	}
	if len(words) < 2 || strings.Contains(words[0], "-") {
		return false // "Keep-alive connections", "Always-on profiling"
	}
	lead := words[0]
	if two := words[0] + " " + words[1]; constraints[two] {
		return true // "make sure", "do not", "no more", "remember to"
	}
	if lead == "never" && words[1] == "mind" || lead == "don't" && (words[1] == "know" || words[1] == "think" || words[1] == "understand" || words[1] == "see") {
		return false
	}
	if declarative(words[1:]) {
		return false
	}
	switch {
	case (lead == "always" || lead == "never") && describes(words[1]):
		return false
	case constraints[lead]:
		return true
	case lead == "only":
		return imperatives[words[1]]
	case typ == memory.TypeDecision || typ == memory.TypeReference:
		return false
	}
	return imperatives[lead]
}
