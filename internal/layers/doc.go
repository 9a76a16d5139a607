// Package layers writes down how git-synaptic's packages stand on each
// other, and its test checks the code against it with go list. Each floor
// imports only floors below it, front ends also each other; nothing points
// back up.
//
//	5  programs and tools    cmd/*, internal/manpages, internal/bench,
//	                         internal/eval/*, internal/testrepo(/golden), internal/evaldata,
//	                         internal/memlog/memlogtest
//	4  front ends            internal/frontend/{cli,mcp,web,agenthook}, the
//	                         small git-synaptic program's internal/frontend/forward
//	                         (to the warm process, else git-synaptic-core), and
//	                         what they share: internal/config (environment,
//	                         version, exit codes), internal/daemon (the warm
//	                         process's socket), internal/agentsetup (agents'
//	                         configuration files)
//	3  the application       internal/app: one Service per repository, the
//	                         parts the front ends call, built on the
//	                         components below
//	2  its components        internal/memlog (memory's log as refs of
//	                         commits, and its index in the cache), internal/history (the commit index,
//	                         co-change and the git hooks), internal/capture
//	                         (agent exchanges as they happen)
//	1  storage and engines   gitstore, cache, rank, embed, hooks, registry,
//	                         internal/secrets
//	0  pure packages         memory (the domain model), cochange, timeexpr,
//	                         internal/memfile, internal/agents,
//	                         internal/directive, and small
//	                         helpers: internal/regular, internal/atomicfile,
//	                         internal/lockfile, internal/excerpt,
//	                         internal/datadir (where the model is installed),
//	                         internal/sibling (git-synaptic's other programs),
//	                         internal/offheap (memory apart from Go's heap)
//
// So a front end reaches storage and the components only through the
// application, and a new package must be given its floor here and in the
// test.
package layers
