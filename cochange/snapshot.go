package cochange

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"path"
	"sync"
	"time"
)

// snapshotMagic starts every snapshot; it changes with the format.
const snapshotMagic = "synaptic-cochange-2\n"

// ErrSnapshot is returned for bytes that are not a snapshot of this
// version.
var ErrSnapshot = errors.New("cochange: not a model snapshot of this version")

var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Snapshot encodes the model, so that a later process can load it in a
// few milliseconds instead of learning the whole history again. Each
// file's partners are a block of their own, which Load keeps encoded until
// a query reaches the file; a CRC-32C of everything ends the snapshot.
func (m *Model) Snapshot() []byte {
	b := []byte(snapshotMagic)
	b = binary.AppendVarint(b, int64(m.opt.MaxFiles))
	b = binary.AppendVarint(b, int64(m.opt.HalfLife))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.opt.SizeExp))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.opt.SameDir))
	b = binary.AppendVarint(b, int64(m.commits))
	b = binary.AppendVarint(b, m.t0)
	b = binary.AppendUvarint(b, uint64(len(m.names)))
	var scratch []byte
	for i, name := range m.names {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		id, live := m.ids[name]
		b = appendBool(b, live && id == int32(i))
		f := m.files[i]
		b = appendBool(b, f.gone)
		b = binary.AppendVarint(b, int64(f.seq))
		b = binary.AppendVarint(b, int64(f.count))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.w))
		b = binary.AppendVarint(b, f.last)
		b = binary.AppendUvarint(b, uint64(len(f.commits)))
		prev := int32(0)
		for _, c := range f.commits {
			b = binary.AppendUvarint(b, uint64(c-prev))
			prev = c
		}
		block := f.raw
		if f.partners != nil {
			scratch = appendPartners(scratch[:0], f.partners)
			block = scratch
		}
		b = binary.AppendUvarint(b, uint64(len(block)))
		b = append(b, block...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable()))
}

func appendPartners(b []byte, partners map[int32]*pair) []byte {
	b = binary.AppendUvarint(b, uint64(len(partners)))
	for other, p := range partners {
		b = binary.AppendUvarint(b, uint64(other))
		b = binary.AppendVarint(b, int64(p.count))
		b = binary.AppendVarint(b, int64(p.seq))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p.w))
		b = binary.AppendVarint(b, p.last)
	}
	return b
}

// Load decodes a model written by Snapshot. The model keeps parts of b:
// the caller must not change b afterwards.
func Load(b []byte) (m *Model, err error) {
	if len(b) < len(snapshotMagic)+4 || string(b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, ErrSnapshot
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable()) != sum {
		return nil, ErrSnapshot
	}
	r := reader{b: body[len(snapshotMagic):]}
	opt := Options{MaxFiles: int(r.varint()), HalfLife: time.Duration(r.varint()), SizeExp: r.float(), SameDir: r.float()}
	m = New(opt)
	m.commits = int32(r.varint())
	m.t0 = r.varint()
	n := r.count(2)
	m.names = make([]string, n)
	m.files = make([]*fileStat, n)
	stats := make([]fileStat, n)
	for i := range m.names {
		name := string(r.bytes(r.count(1)))
		m.names[i] = name
		if r.bool() {
			m.ids[name] = int32(i)
		}
		d, st := path.Dir(name), stem(name)
		m.dirs[d] = append(m.dirs[d], int32(i))
		m.stems[st] = append(m.stems[st], int32(i))
		f := &stats[i]
		m.files[i] = f
		f.gone = r.bool()
		f.seq = int32(r.varint())
		f.count = int(r.varint())
		f.w = r.float()
		f.last = r.varint()
		f.commits = make([]int32, r.count(1))
		prev := int32(0)
		for j := range f.commits {
			prev += int32(r.uvarint())
			f.commits[j] = prev
		}
		f.raw = r.bytes(r.count(1))
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, ErrSnapshot
	}
	return m, nil
}

// partners are file id's partners, decoded from the snapshot on first use.
// A block that does not decode (which the checksum makes a bug, not
// damage) reads as no partners.
func (m *Model) partners(id int32) map[int32]*pair {
	f := m.files[id]
	if f.partners != nil {
		return f.partners
	}
	r := reader{b: f.raw}
	f.raw = nil
	np := r.count(4)
	f.partners = make(map[int32]*pair, np)
	pairs := make([]pair, np)
	for j := range pairs {
		other := int32(r.uvarint())
		pairs[j] = pair{count: int(r.varint()), seq: int32(r.varint()), w: r.float(), last: r.varint()}
		if other < 0 || int(other) >= len(m.files) {
			r.fail()
		}
		f.partners[other] = &pairs[j]
	}
	if r.err != nil || len(r.b) != 0 {
		clear(f.partners)
	}
	return f.partners
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// reader decodes a snapshot; the first error sticks and reads return zero.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() { r.err, r.b = ErrSnapshot, nil }

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length whose items take at least size bytes each, so that
// a damaged snapshot cannot ask for more memory than it could describe.
func (r *reader) count(size int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/size) {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *reader) float() float64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

func (r *reader) bool() bool {
	if len(r.b) < 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
