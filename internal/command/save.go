package command

import (
	"io"
	"math"

	"basalt/internal/rdb"
	"basalt/internal/store"
)

// SAVE, BGSAVE, LASTSAVE and BGREWRITEAOF are the server's (they write a
// file or answer about the node itself, never go through the log); their
// table entries are here with the writer of the file.
func init() {
	adminCats := []string{"admin", "dangerous"}
	register(
		&Command{Name: "save", Arity: 1, Flags: Conn | Admin | NoScript | NoAsyncLoading | NoMulti, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "Synchronously save the dataset to disk"},
		&Command{Name: "bgsave", Arity: -1, Flags: Conn | Admin | NoScript | NoAsyncLoading, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "Asynchronously save the dataset to disk"},
		&Command{Name: "lastsave", Arity: 1, Flags: Conn | Loading | Stale | Fast, Categories: []string{"admin", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Get the UNIX time stamp of the last successful save to disk", Tips: []string{"nondeterministic_output"}},
		&Command{Name: "bgrewriteaof", Arity: 1, Flags: Conn | Admin | NoScript | NoAsyncLoading, Categories: adminCats, Group: "server", Since: "1.0.0", Summary: "Asynchronously rewrite the append-only file"},
	)
}

// RDBParts says what WriteRDB leaves out; the zero value writes it all.
// A snapshot asked for with REPLCONF rdb-filter-only holds only the parts
// its filter names.
type RDBParts struct {
	NoKeys, NoFunctions bool
}

// WriteRDB writes the whole store as views see it to w as an RDB file
// (SAVE, BGSAVE, SYNC): the function libraries, then every database with
// keys, each key with its expiry and its value as DUMP reads it
// (DumpValue), less what skip leaves out. A node in cluster mode gives a
// view of each of its shards (their function libraries agree, so the
// first one's are written). Keys already expired at the view's clock are
// left out, as reads leave them out. A failure of the store panics, as in
// any read; a failure of w is returned.
func WriteRDB(w io.Writer, views []*store.View, aux []rdb.AuxField, skip RDBParts) error {
	f := rdb.NewFileWriter(w, aux)
	if !skip.NoFunctions {
		_, codes := views[0].Tx.FunctionLibraries()
		f.Functions(codes)
	}
	for db := range views[0].Keys {
		var keys, expires int64
		for _, v := range views {
			keys, expires = keys+v.Keys[db], expires+v.Expires[db]
		}
		if keys == 0 || skip.NoKeys {
			continue
		}
		f.Database(db, uint64(keys), uint64(expires))
		for _, v := range views {
			tx := v.Tx
			tx.DB = db
			tx.Scan(0, math.MaxInt, func(key []byte, m store.Meta) {
				if f.Err() != nil {
					return // the file is lost anyway: read no more values
				}
				f.Key(key, m.ExpireAt, DumpValue(tx, key, m))
			})
		}
	}
	return f.Close()
}
