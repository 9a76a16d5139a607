package cache

import (
	"context"
	"testing"
)

// rowid_set gathers rowids as readAdmitted's bitset: rowid i is bit i%8
// of byte i/8, a rowid below zero is left out, none gives an empty set
// (not nil: nil admits every row), and a rowid past 2^32 is an error
// rather than a bitset of gigabytes.
func TestRowidSetGathersABitset(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var b []byte
	if err := c.db.QueryRowContext(ctx, `SELECT rowid_set(x) FROM (SELECT 5 AS x UNION ALL SELECT 64 UNION ALL SELECT -3 UNION ALL SELECT 5 UNION ALL SELECT 'text')`).Scan(&b); err != nil {
		t.Fatal(err)
	}
	if len(b)%8 != 0 || len(b) < 9 || b[0] != 1<<5 || b[8] != 1 {
		t.Fatalf("rowids 5 and 64 gathered as %x", b)
	}
	for i, x := range b {
		if i != 0 && i != 8 && x != 0 {
			t.Fatalf("byte %d of %x is set", i, b)
		}
	}
	set, err := readAdmitted(ctx, c.db, "0", nil)
	if err != nil || set == nil || len(set) != 0 {
		t.Fatalf("no rows admitted: %v, %v", set, err)
	}
	if err := c.db.QueryRowContext(ctx, `SELECT rowid_set(4294967296)`).Scan(&b); err == nil {
		t.Fatal("a rowid past 2^32 was gathered")
	}
}
