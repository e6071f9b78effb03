package server

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"basalt/internal/command"
	"basalt/internal/glob"
)

// CONFIG GET, SET, RESETSTAT and REWRITE over the parameter table
// (configtable.go).

var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Prints this help.",
}

func cmdConfig(c *Client, argv [][]byte) {
	switch strings.ToLower(string(argv[1])) {
	case "get":
		configGet(c, argv[2:])
	case "set":
		configSet(c, argv[2:])
	case "resetstat":
		st := &c.srv.Stats
		for _, n := range []interface{ Store(int64) }{&st.Connections, &st.Rejected, &st.Commands, &st.ExpiredKeys,
			&st.NetInput, &st.NetOutput} {
			n.Store(0)
		}
		for _, sh := range c.srv.shards {
			sh.Store().Hits.Store(0)
			sh.Store().Misses.Store(0)
		}
		c.tally.Drop()
		c.srv.errors.reset()
		for _, cmd := range command.All() { // commandstats, latencystats, LATENCY HISTOGRAM
			cmd.Stats.Reset()
			for _, sub := range cmd.Subcommands {
				sub.Stats.Reset()
			}
		}
		c.reply().OK()
	case "rewrite":
		if err := c.srv.rewriteConfig(); err != nil {
			c.reply().Error("ERR " + err.Error())
			return
		}
		c.reply().OK()
	case "help":
		command.HelpReply(c.reply(), configHelp)
	}
}

// configGet answers each name or alias matched, under the name it was
// matched by, as Redis does: a plain name as typed, a pattern's matches
// once per name (an alias is a name of its own).
func configGet(c *Client, patterns [][]byte) {
	cfg := c.srv.config()
	var names []string
	var matched []*param
	add := func(name string, p *param) {
		if p != nil && p.flags&secret == 0 && !slices.Contains(names, name) {
			names, matched = append(names, name), append(matched, p)
		}
	}
	for _, pat := range patterns {
		if !strings.ContainsAny(string(pat), "*?[") {
			add(string(pat), lookupParam(string(pat)))
			continue
		}
		for _, name := range configNames() {
			if glob.Match(pat, []byte(name), true) {
				add(name, lookupParam(name))
			}
		}
	}
	w := c.reply()
	w.MapLen(len(names))
	for i, name := range names {
		w.BulkString(name)
		w.BulkString(cfg.get(matched[i]))
	}
}

// configSet sets all its parameters or none, with Redis's errors: every
// name is checked before any value.
func configSet(c *Client, args [][]byte) {
	w := c.reply()
	if len(args) == 0 || len(args)%2 != 0 {
		w.Error(command.WrongArity("config|set"))
		return
	}
	failed := func(name, why string) {
		w.Error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why)
	}
	// As in Redis, an alias is a parameter of its own here: setting it
	// and its name at once is no duplicate, and errors name it.
	var set []string
	for i := 0; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		p := lookupParam(name)
		if p == nil {
			w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
			return
		}
		if p.flags&protected != 0 && !c.allowedBy(c.srv.config().EnableProtectedConfigs) {
			// Before immutable: basalt's dir is both, Redis's protected only.
			failed(string(args[i]), "can't set protected config")
			return
		}
		if p.flags&immutable != 0 {
			failed(string(args[i]), "can't set immutable config")
			return
		}
		if slices.Contains(set, name) {
			failed(string(args[i]), "duplicate parameter")
			return
		}
		set = append(set, name)
	}
	s := c.srv
	s.mu.Lock()
	cfg := s.cfg // all or nothing: work on a copy
	for i, name := range set {
		if err := cfg.Set(name, string(args[2*i+1])); err != nil {
			s.mu.Unlock()
			failed(name, err.Error())
			return
		}
	}
	for i, name := range set {
		if try := lookupParam(name).try; try != nil {
			if err := try(s, cfg); err != nil {
				// As Redis's restoreBackupConfig: what the settings tried
				// before changed (a listener moved) is tried with the old
				// values again.
				for _, done := range set[:i] {
					if undo := lookupParam(done).try; undo != nil {
						undo(s, s.cfg)
					}
				}
				s.mu.Unlock()
				failed(name, err.Error())
				return
			}
		}
	}
	s.cfg = cfg
	s.mu.Unlock()
	for _, name := range set {
		p := lookupParam(name)
		if p.apply != nil {
			p.apply(s, cfg)
		}
		if p.unused != "" { // tools set these often: below notice
			slog.Log(context.Background(), logLevels["verbose"], "config set: not applied", "parameter", p.name, "why", p.unused)
		}
	}
	w.OK()
}

// rewriteConfig writes the running settings into the config file: lines
// that set a parameter are replaced in place (later duplicates dropped),
// and parameters that differ from their defaults and are not in the file
// are appended, as Redis's CONFIG REWRITE does. Aliases are written under
// their parameter's name.
func (s *Server) rewriteConfig() error {
	cfg := s.config()
	if cfg.File == "" {
		return fmt.Errorf("The server is running without a config file")
	}
	old, err := os.ReadFile(cfg.File)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("Rewriting config file: %v", err)
	}
	def := DefaultConfig()
	line := func(p *param) string { return p.name + " " + quoteConfig(cfg.get(p), p.flags&multiArg != 0) }
	var out []string
	done := map[*param]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(old)))
	for sc.Scan() {
		text := sc.Text()
		fields := strings.Fields(text)
		if len(fields) > 0 && fields[0][0] != '#' {
			if p := lookupParam(fields[0]); p != nil && p.flags&secret == 0 { // a secret's line stays as written
				if !done[p] {
					out = append(out, line(p))
				}
				done[p] = true
				continue
			}
		}
		out = append(out, text)
	}
	header := false
	for i := range params {
		p := &params[i]
		if done[p] || p.flags&secret != 0 || cfg.get(p) == def.get(p) {
			continue
		}
		if !header {
			out = append(out, "# Generated by CONFIG REWRITE")
			header = true
		}
		out = append(out, line(p))
	}
	tmp := filepath.Join(filepath.Dir(cfg.File), "."+filepath.Base(cfg.File)+".tmp")
	if err := os.WriteFile(tmp, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("Rewriting config file: %v", err)
	}
	if err := os.Rename(tmp, cfg.File); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("Rewriting config file: %v", err)
	}
	return nil
}

// quoteConfig quotes a value for a config file line when it is empty or
// has characters the line splitter would take apart. A multi-argument
// parameter's words stay apart (save 3600 1), as Redis writes them.
func quoteConfig(v string, multi bool) string {
	if v != "" && !strings.ContainsAny(v, "\t\r\n\"'\\") && (multi || !strings.Contains(v, " ")) {
		return v
	}
	return strconv.Quote(v)
}
