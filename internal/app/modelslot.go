package app

import (
	"io"

	"github.com/git-synaptic/git-synaptic/embed"
)

// modelSlot is a Service's embedding model: given (Options.Embedder),
// lent by the warm process (Options.LoadEmbedder) or loaded here, in each
// case on first use and once; closed here only when loaded here.
type modelSlot struct {
	name, backend string                                        // Options.Model (or the default) and EmbedBackend
	emb           Embedder                                      // nil until given, lent or loaded
	err           error                                         // why it could not be had; asked once
	own           bool                                          // loaded here, so closed here
	lend          func(model, backend string) (Embedder, error) // Options.LoadEmbedder
	memo          *queryMemo                                    // emb as other projects use it
}

// get returns the model, loading it the first time.
func (m *modelSlot) get() (Embedder, error) {
	if m.emb != nil || m.err != nil {
		return m.emb, m.err
	}
	if m.lend != nil {
		m.emb, m.err = m.lend(m.name, m.backend)
		return m.emb, m.err
	}
	found, err := embed.Find(m.name)
	if err == nil {
		var loaded *embed.Model
		if loaded, err = embed.Load(found, embed.Options{Backend: m.backend}); err == nil {
			m.emb, m.own = loaded, true
		}
	}
	m.err = err
	return m.emb, err
}

// loaded is the model if it is loaded already, else nil: what is done
// only where the model is at hand anyway asks this, never loads it.
func (m *modelSlot) loaded() Embedder { return m.emb }

// shared is the model as the other projects a search reads use it: one
// query embedded once for all of them (nil when not loaded).
func (m *modelSlot) shared() Embedder {
	if m.emb == nil {
		return nil
	}
	if m.memo == nil {
		m.memo = &queryMemo{Embedder: m.emb}
	}
	return m.memo
}

// adopt takes e, another project's model, when none is loaded here.
func (m *modelSlot) adopt(e Embedder) {
	if m.emb == nil && e != nil {
		m.emb, m.err = e, nil
	}
}

// forgetLent drops a model that was lent or adopted, so that the next
// request starts without it; one loaded here stays. It reports whether it
// dropped one.
func (m *modelSlot) forgetLent() bool {
	if m.own {
		return false
	}
	m.emb, m.err, m.memo = nil, nil, nil
	return true
}

// close closes a model loaded here.
func (m *modelSlot) close() error {
	if c, ok := m.emb.(io.Closer); ok && m.own {
		return c.Close()
	}
	return nil
}
