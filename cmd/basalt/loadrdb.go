package main

// basalt load-rdb: loads a Redis RDB file (dump.rdb) into a running basalt
// by sending each key as RESTORE and each function library as FUNCTION
// RESTORE. They are ordinary writes, so they go through the log (and Raft
// in a cluster, where any node takes them) and are as durable as any
// write; each key is one RESTORE, so a key is loaded whole or not at all.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"basalt/internal/rdb"
)

const loadUsage = `usage: basalt load-rdb [--host 127.0.0.1] [--port 6379] [--user NAME] [--password PASS]
                       [--replace] [--db-offset N] [--batch N] [--dry-run] dump.rdb

Loads a Redis RDB file (redis-cli --rdb, SAVE or BGSAVE) into a running basalt.
Keys already present are not overwritten (the load stops at the first one)
unless --replace is given; keys already expired are skipped.`

// loadOptions are load-rdb's flags.
type loadOptions struct {
	host, user, password string
	port, dbOffset       int
	batch                int
	replace, dryRun      bool
	file                 string
}

// Exit codes of load-rdb.
const (
	exitLoadFailed = 1 // the file or the server refused something
	exitUsage      = 2
)

// batchBytes bounds the payload bytes of one pipelined batch.
const batchBytes = 16 << 20

// runLoadRDB runs the subcommand with its arguments and returns the exit
// code.
func runLoadRDB(args []string, stdout, stderr io.Writer) int {
	opt, err := parseLoadArgs(args, stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintln(stderr, "basalt load-rdb:", err)
		fmt.Fprintln(stderr, loadUsage)
		return exitUsage
	}
	l := &loader{opt: opt, stderr: stderr, keys: map[int]int{}}
	err = l.run()
	if err != nil {
		l.failed = max(l.failed, 1)
	}
	if l.started {
		l.report(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "basalt load-rdb:", err)
		return exitLoadFailed
	}
	return 0
}

func parseLoadArgs(args []string, stderr io.Writer) (loadOptions, error) {
	var o loadOptions
	fs := flag.NewFlagSet("load-rdb", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.host, "host", "127.0.0.1", "")
	fs.IntVar(&o.port, "port", 6379, "")
	fs.StringVar(&o.user, "user", "", "")
	fs.StringVar(&o.password, "password", "", "")
	fs.BoolVar(&o.replace, "replace", false, "")
	fs.IntVar(&o.dbOffset, "db-offset", 0, "")
	fs.IntVar(&o.batch, "batch", 100, "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	var files []string
	// Flags may come after the file too.
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fmt.Fprintln(stderr, loadUsage)
			}
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) != 1:
		return o, errors.New("give exactly one RDB file")
	case o.batch < 1:
		return o, errors.New("--batch must be at least 1")
	case o.dbOffset < 0:
		return o, errors.New("--db-offset must not be negative")
	}
	o.file = files[0]
	return o, nil
}

// loader sends a file's records to the server, in pipelined batches.
type loader struct {
	opt    loadOptions
	stderr io.Writer
	conn   *redis.Conn
	maxArg int64 // the server's proto-max-bulk-len

	// Counts for the report.
	keys      map[int]int // keys loaded per database (of the server)
	expired   int         // keys expired already, skipped
	functions int
	modules   []string // modules whose auxiliary data was skipped
	failed    int

	started bool // the file's header was read: there is a report

	pipe    redis.Pipeliner
	pending []pendingCmd
	bytes   int
	db      int // the database the connection has SELECTed, -1 at first
}

// pendingCmd is a command of the batch and what it loads.
type pendingCmd struct {
	cmd   *redis.Cmd
	what  string // for messages: key "k" of db 0, library "lib"
	db    int    // a key's database
	isKey bool   // a key, else a library
}

func (l *loader) run() error {
	f, err := os.Open(l.opt.file)
	if err != nil {
		return err
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	r, err := rdb.NewFileReader(bufio.NewReaderSize(f, 1<<20), size)
	if err != nil {
		return fmt.Errorf("%s: %w", l.opt.file, err)
	}
	if !l.opt.dryRun {
		if err := l.connect(); err != nil {
			return err
		}
		defer l.conn.Close()
	}
	l.started = true
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return l.flush()
		}
		if err != nil {
			// The records before the broken one are sent: the report
			// counts what was loaded.
			if ferr := l.flush(); ferr != nil {
				return ferr
			}
			return fmt.Errorf("%s: %w", l.opt.file, err)
		}
		if err := l.add(rec); err != nil {
			return err
		}
	}
}

// connect opens one connection and checks the server answers. go-redis
// must not retry: a batch retried after a timeout would find its own keys
// and fail with BUSYKEY.
func (l *loader) connect() error {
	redis.SetLogger(quietLogger{}) // errors reach the user as load-rdb's own messages
	c := redis.NewClient(&redis.Options{
		Addr:            l.opt.host + ":" + strconv.Itoa(l.opt.port),
		Username:        l.opt.user,
		Password:        l.opt.password,
		Protocol:        2,
		DisableIdentity: true,
		MaxRetries:      -1,
		DialTimeout:     10 * time.Second,
		ReadTimeout:     5 * time.Minute, // a batch of big keys through Raft
		WriteTimeout:    5 * time.Minute,
		PoolSize:        1,
	})
	l.conn = c.Conn()
	ctx := context.Background()
	if err := l.conn.Ping(ctx).Err(); err != nil {
		l.conn.Close()
		return fmt.Errorf("connecting to %s:%d: %w", l.opt.host, l.opt.port, err)
	}
	l.maxArg = 512 << 20
	if m, err := l.conn.ConfigGet(ctx, "proto-max-bulk-len").Result(); err == nil {
		if n, err := strconv.ParseInt(m["proto-max-bulk-len"], 10, 64); err == nil {
			l.maxArg = n
		}
	}
	l.db = -1
	l.pipe = l.conn.Pipeline()
	return nil
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// add queues a record's command, and sends the batch once full.
func (l *loader) add(rec *rdb.Record) error {
	ctx := context.Background()
	switch rec.Kind {
	case rdb.RecordModuleAux:
		l.modules = append(l.modules, rec.Module)
		fmt.Fprintf(l.stderr, "basalt load-rdb: skipped the auxiliary data of module %s: basalt has no modules\n", rec.Module)
		return nil
	case rdb.RecordFunction:
		name := libraryName(rec.Code)
		if l.opt.dryRun {
			l.functions++
			return nil
		}
		p := rdb.EncodeFunctions([][]byte{rec.Code})
		args := []any{"FUNCTION", "RESTORE", p}
		if l.opt.replace {
			args = append(args, "REPLACE")
		}
		l.queue(pendingCmd{cmd: l.pipe.Do(ctx, args...), what: fmt.Sprintf("library %q", name)}, len(p))
	case rdb.RecordKey:
		db := rec.DB + l.opt.dbOffset
		what := fmt.Sprintf("key %q of db %d", rec.Key, rec.DB)
		if rec.ExpireMs != 0 && rec.ExpireMs <= time.Now().UnixMilli() {
			// Redis skips them too when it loads a file as a master.
			l.expired++
			return nil
		}
		p := rdb.Encode(rec.Value)
		if l.opt.dryRun {
			l.keys[db]++
			return nil
		}
		if int64(len(p)) > l.maxArg {
			l.failed++
			return fmt.Errorf("%s: its RESTORE payload of %d bytes is over the server's proto-max-bulk-len (%d)", what, len(p), l.maxArg)
		}
		if db != l.db {
			// Synchronously: keys must never go to the database before
			// a SELECT that failed. A file selects each database once.
			if err := l.flush(); err != nil {
				return err
			}
			if err := l.conn.Select(ctx, db).Err(); err != nil {
				return fmt.Errorf("SELECT %d (for db %d of the file): %w", db, rec.DB, err)
			}
			l.db = db
		}
		args := []any{"RESTORE", string(rec.Key), rec.ExpireMs, p, "ABSTTL"}
		if l.opt.replace {
			args = append(args, "REPLACE")
		}
		l.queue(pendingCmd{cmd: l.pipe.Do(ctx, args...), what: what, db: db, isKey: true}, len(p))
	}
	if len(l.pending) >= l.opt.batch || l.bytes >= batchBytes {
		return l.flush()
	}
	return nil
}

func (l *loader) queue(c pendingCmd, n int) {
	l.pending = append(l.pending, c)
	l.bytes += n
}

// flush sends the batch and counts its replies. Every command of a batch
// is applied or refused on its own; after a refusal the load stops, once
// the whole batch is counted.
func (l *loader) flush() error {
	if len(l.pending) == 0 {
		return nil
	}
	_, err := l.pipe.Exec(context.Background())
	var errs []string
	for _, c := range l.pending {
		cerr := c.cmd.Err()
		switch {
		case cerr == nil && c.isKey:
			l.keys[c.db]++
		case cerr == nil:
			l.functions++
		case cerr != nil:
			l.failed++
			msg := cerr.Error()
			if strings.HasPrefix(msg, "BUSYKEY") || strings.Contains(msg, "already exists") {
				msg += " (use --replace to overwrite)"
			}
			errs = append(errs, fmt.Sprintf("%s: %s", c.what, msg))
		}
	}
	l.pending, l.bytes = l.pending[:0], 0
	if len(errs) > 0 {
		for _, e := range errs[:len(errs)-1] {
			fmt.Fprintln(l.stderr, "basalt load-rdb:", e)
		}
		return errors.New(errs[len(errs)-1])
	}
	return err // a connection error that no command reported
}

// report prints what was loaded.
func (l *loader) report(w io.Writer) {
	dbs := make([]int, 0, len(l.keys))
	total := 0
	for db, n := range l.keys {
		dbs = append(dbs, db)
		total += n
	}
	sort.Ints(dbs)
	verb := "loaded"
	if l.opt.dryRun {
		verb = "read (dry run, nothing sent)"
	}
	fmt.Fprintf(w, "keys %s: %d\n", verb, total)
	for _, db := range dbs {
		fmt.Fprintf(w, "  db %d: %d\n", db, l.keys[db])
	}
	fmt.Fprintf(w, "keys expired, skipped: %d\n", l.expired)
	fmt.Fprintf(w, "function libraries %s: %d\n", verb, l.functions)
	if len(l.modules) > 0 {
		fmt.Fprintf(w, "module data skipped: %s\n", strings.Join(l.modules, ", "))
	}
	fmt.Fprintf(w, "errors: %d\n", l.failed)
}

// libraryName reads the name from a library's "#!lua name=..." line.
func libraryName(code []byte) string {
	line, _, _ := strings.Cut(string(code[:min(len(code), 256)]), "\n")
	for _, f := range strings.Fields(line) {
		if name, ok := strings.CutPrefix(f, "name="); ok {
			return name
		}
	}
	return "?"
}
