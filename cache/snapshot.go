package cache

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
)

// snapshot is one connection inside a read transaction: every query it
// answers sees the database as it was at the first.
type snapshot interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readSnapshot runs f in a read transaction of its own on one of the
// cache's connections. The connections begin their transactions
// IMMEDIATE (_txlock: a writer takes the write lock before it reads, and
// never deadlocks on the upgrade), and the driver ignores
// sql.TxOptions.ReadOnly; a plain BEGIN reads from a snapshot without the
// write lock. Reading the sign bits as a write did, every search and
// prompt queued behind the writers of other processes (saves, a prompt's
// showings): under 12 prompt hooks at once with a repack, some ran out of
// their wait and gave no context.
func (c *Cache) readSnapshot(ctx context.Context, f func(snapshot) error) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("cache: vector search: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN`); err != nil {
		return fmt.Errorf("cache: vector search: %w", err)
	}
	ferr := f(conn)
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`); err != nil {
		// a connection left in the transaction must not serve again
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(ferr, fmt.Errorf("cache: end a read: %w", err))
	}
	return ferr
}
