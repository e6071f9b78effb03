package server

import (
	"fmt"
	"slices"
	"strings"

	"basalt/internal/command"
)

// INFO commandstats and latencystats: per command (subcommands as
// "container|sub"), in name order (Redis's is its table's hash order).

// calledCommands lists every command and subcommand, in name order.
func calledCommands() []*command.Command {
	var cmds []*command.Command
	for _, cmd := range command.All() {
		cmds = append(cmds, cmd)
		cmds = append(cmds, cmd.Subcommands...)
	}
	slices.SortFunc(cmds, func(a, b *command.Command) int { return strings.Compare(a.Name, b.Name) })
	return cmds
}

// commandstatsLines are the commands called, refused or failed, as
// cmdstat_<name>:calls=N,usec=U,usec_per_call=F,rejected_calls=R,failed_calls=X.
func commandstatsLines() []string {
	var out []string
	for _, cmd := range calledCommands() {
		n := cmd.Stats.Counters()
		if n.Calls == 0 && n.Rejected == 0 && n.Failed == 0 {
			continue
		}
		usec := n.Ns / 1000
		perCall := 0.0
		if n.Calls > 0 {
			perCall = float64(usec) / float64(n.Calls)
		}
		out = append(out, fmt.Sprintf("cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			infoSafe(cmd.Name), n.Calls, usec, perCall, n.Rejected, n.Failed))
	}
	return out
}

// latencystatsLines are the commands with a latency histogram, as
// latency_percentiles_usec_<name>:p50=F,p99=F,p99.9=F (µs, 3 decimals).
func latencystatsLines(percentiles []float64) []string {
	var out []string
	for _, cmd := range calledCommands() {
		h := cmd.Stats.Histogram()
		if h == nil {
			continue
		}
		var b strings.Builder
		b.WriteString("latency_percentiles_usec_" + infoSafe(cmd.Name) + ":")
		for i, p := range percentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "p%s=%.3f", formatPercentile(p), float64(h.Percentile(p))/1000)
		}
		out = append(out, b.String())
	}
	return out
}
