package server

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"basalt/internal/command"
)

// The latency monitor (LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR) as
// Redis 7.0 keeps it: per event, one sample a second (the highest), the
// last 160 of them, and the highest ever; only latencies of at least
// latency-monitor-threshold ms, and nothing while it is 0. basalt raises
// the events "command" and "fast-command" (commands flagged fast).

const latencySamples = 160

type latencySample struct{ at, ms int64 }

type latencySeries struct {
	idx     int
	max     int64
	samples [latencySamples]latencySample
}

type latencyMonitor struct {
	threshold atomic.Int64 // ms; 0: off
	mu        sync.Mutex
	events    map[string]*latencySeries
}

// sample records a latency of ms for event if it reaches the threshold.
func (m *latencyMonitor) sample(event string, ms int64) {
	t := m.threshold.Load()
	if t == 0 || ms < t {
		return
	}
	now := time.Now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = map[string]*latencySeries{}
	}
	ts := m.events[event]
	if ts == nil {
		ts = &latencySeries{}
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencySamples-1)%latencySamples]
	if prev.at == now { // one sample a second: the highest
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{now, ms}
	ts.idx = (ts.idx + 1) % latencySamples
}

// history returns an event's samples, oldest first (m.mu held).
func (ts *latencySeries) history() []latencySample {
	var out []latencySample
	for j := range latencySamples {
		if s := ts.samples[(ts.idx+j)%latencySamples]; s.at != 0 {
			out = append(out, s)
		}
	}
	return out
}

// names returns the events in name order (m.mu held).
func (m *latencyMonitor) names() []string {
	out := make([]string, 0, len(m.events))
	for name := range m.events {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

var latencyHelp = []string{
	"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return a human readable latency analysis report.",
	"GRAPH <event>",
	"    Return an ASCII latency graph for the <event> class.",
	"HISTORY <event>",
	"    Return time-latency samples for the <event> class.",
	"LATEST",
	"    Return the latest latency samples for all events.",
	"RESET [<event> ...]",
	"    Reset latency data of one or more <event> classes.",
	"    (default: reset all data for all event classes)",
	"HISTOGRAM [COMMAND ...]",
	"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
	"    If no commands are specified then all histograms are replied.",
	"HELP",
	"    Prints this help.",
}

func cmdLatency(c *Client, argv [][]byte) {
	m := &c.srv.latency
	w := c.reply()
	switch strings.ToLower(string(argv[1])) {
	case "help":
		command.HelpReply(w, latencyHelp)
	case "histogram":
		latencyHistogram(c, argv[2:])
	case "latest":
		m.mu.Lock()
		names := m.names()
		w.ArrayLen(len(names))
		for _, name := range names {
			ts := m.events[name]
			last := ts.samples[(ts.idx+latencySamples-1)%latencySamples]
			w.ArrayLen(4)
			w.BulkString(name)
			w.Int(last.at)
			w.Int(last.ms)
			w.Int(ts.max)
		}
		m.mu.Unlock()
	case "history":
		m.mu.Lock()
		var samples []latencySample
		if ts := m.events[string(argv[2])]; ts != nil {
			samples = ts.history()
		}
		m.mu.Unlock()
		w.ArrayLen(len(samples))
		for _, s := range samples {
			w.ArrayLen(2)
			w.Int(s.at)
			w.Int(s.ms)
		}
	case "reset":
		m.mu.Lock()
		n := 0
		if len(argv) == 2 {
			n = len(m.events)
			m.events = nil
		}
		for _, e := range argv[2:] {
			if m.events[string(e)] != nil {
				delete(m.events, string(e))
				n++
			}
		}
		m.mu.Unlock()
		w.Int(int64(n))
	case "graph":
		event := string(argv[2])
		m.mu.Lock()
		ts := m.events[event]
		var graph string
		if ts != nil {
			graph = latencyGraph(event, ts, time.Now().Unix())
		}
		m.mu.Unlock()
		if ts == nil {
			w.Error("ERR No samples available for event '" + event + "'")
			return
		}
		w.Verbatim("txt", graph)
	case "doctor":
		w.Verbatim("txt", c.srv.latencyReport())
	}
}

// latencyHistogram answers LATENCY HISTOGRAM: for each command called
// (or each named, and the subcommands of a named container), its calls
// and the cumulative count at each power-of-2 level, levels where the
// count does not grow left out, as Redis 7.0 reports them.
func latencyHistogram(c *Client, names [][]byte) {
	c.tally.Flush()
	var cmds []*command.Command
	var hists []*command.Histogram
	add := func(cmd *command.Command) {
		if h := cmd.Stats.Histogram(); h != nil {
			cmds, hists = append(cmds, cmd), append(hists, h)
		}
	}
	if len(names) == 0 {
		for _, cmd := range command.All() {
			add(cmd)
			for _, sub := range cmd.Subcommands {
				add(sub)
			}
		}
		order := make([]int, len(cmds))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(cmds[a].Name, cmds[b].Name) })
		sortedCmds, sortedHists := make([]*command.Command, len(cmds)), make([]*command.Histogram, len(cmds))
		for i, j := range order {
			sortedCmds[i], sortedHists[i] = cmds[j], hists[j]
		}
		cmds, hists = sortedCmds, sortedHists
	}
	for _, name := range names {
		cmd := lookupFullName(string(name))
		if cmd == nil {
			continue
		}
		add(cmd)
		for _, sub := range cmd.Subcommands {
			add(sub)
		}
	}
	w := c.reply()
	w.MapLen(len(cmds))
	for i, cmd := range cmds {
		calls, buckets := hists[i].Total, hists[i].Levels()
		w.BulkString(cmd.Name)
		w.MapLen(2)
		w.BulkString("calls")
		w.Int(calls)
		w.BulkString("histogram_usec")
		var labels, counts []int64
		total := int64(0)
		for i, n := range buckets {
			if n == 0 {
				continue
			}
			total += n
			labels, counts = append(labels, command.HistogramLabel(i)), append(counts, total)
		}
		w.MapLen(len(labels))
		for i := range labels {
			w.Int(labels[i])
			w.Int(counts[i])
		}
	}
}

// lookupFullName finds "name" or "container|sub", in any case.
func lookupFullName(name string) *command.Command {
	parent, sub, isSub := strings.Cut(name, "|")
	cmd := command.Lookup([]byte(parent))
	if cmd == nil || !isSub {
		return cmd
	}
	return cmd.Subcommand([]byte(sub))
}

// latencyGraph draws an event's samples as Redis's LATENCY GRAPH does:
// a title, a rule, a sparkline of 4 rows, 80 columns a block, and under
// each column, written downwards, how long ago its sample was taken.
func latencyGraph(event string, ts *latencySeries, now int64) string {
	samples := ts.history()
	lo, hi := samples[0].ms, samples[0].ms
	labels := make([]string, len(samples))
	for i, s := range samples {
		lo, hi = min(lo, s.ms), max(hi, s.ms)
		switch ago := now - s.at; {
		case ago < 60:
			labels[i] = fmt.Sprintf("%ds", ago)
		case ago < 3600:
			labels[i] = fmt.Sprintf("%dm", ago/60)
		case ago < 86400:
			labels[i] = fmt.Sprintf("%dh", ago/3600)
		default:
			labels[i] = fmt.Sprintf("%dd", ago/86400)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, ts.max)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	for from := 0; from < len(samples); from += 80 {
		if from > 0 {
			b.WriteString("\n")
		}
		to := min(from+80, len(samples))
		sparkline(&b, samples[from:to], labels[from:to], lo, hi)
	}
	return b.String()
}

// sparkline renders 4 rows of bars (3 heights a row: "_o#", "|" below
// the top) and then the labels, one character a row, after a blank row.
func sparkline(b *strings.Builder, samples []latencySample, labels []string, lo, hi int64) {
	const rows, fill = 4, "_o#"
	steps := len(fill) * rows
	rel := float64(hi - lo)
	if rel == 0 {
		rel = 1
	}
	line := make([]byte, len(samples))
	for row := 0; row < rows; row++ {
		for i, s := range samples {
			step := min(max(int(float64(s.ms-lo)*float64(steps)/rel), 0), steps-1)
			line[i] = ' '
			if ci := step - (rows-row-1)*len(fill); ci >= 0 && ci < len(fill) {
				line[i] = fill[ci]
			} else if ci >= len(fill) {
				line[i] = '|'
			}
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	longest := 0
	for _, l := range labels {
		longest = max(longest, len(l))
	}
	b.WriteString(strings.Repeat(" ", len(samples)) + "\n")
	for row := range longest {
		for i, l := range labels {
			line[i] = ' '
			if row < len(l) {
				line[i] = l[row]
			}
		}
		b.Write(line)
		b.WriteByte('\n')
	}
}

// latencyReport is LATENCY DOCTOR's text, in Redis's words for the cases
// basalt has: monitoring off, no spike, spikes of commands.
func (s *Server) latencyReport() string {
	m := &s.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	threshold := m.threshold.Load()
	if len(m.events) == 0 && threshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	if len(m.events) == 0 {
		return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n"
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	now := time.Now().Unix()
	for i, name := range m.names() {
		ts := m.events[name]
		samples := ts.history()
		sum, oldest := int64(0), now
		for _, s := range samples {
			sum += s.ms
			oldest = min(oldest, s.at)
		}
		avg := sum / int64(len(samples))
		dev := 0.0
		for _, s := range samples {
			dev += math.Abs(float64(s.ms - avg))
		}
		period := max(now-oldest, 1)
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
			i+1, name, len(samples), avg, int64(dev)/int64(len(samples)), float64(period)/float64(len(samples)), ts.max)
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if slower := s.slowlog.slowerThan.Load(); slower < 0 {
		b.WriteString("- The system slow log is disabled, and this is an important tool to understand the source of latency spikes. Please enable it with 'CONFIG SET slowlog-log-slower-than <microseconds>'.\n")
	} else if slower/1000 > threshold {
		fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
	}
	b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	return b.String()
}
