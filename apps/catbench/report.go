package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// cell is one route × mix × limit measurement.
type cell struct {
	route, mix string
	limit      int
	stats      stats
}

// report is one back end at one scale.
type report struct {
	backend, scale string
	machine        string
	lines          int
	workers        int
	gomemlimit     string
	importTime     time.Duration
	importRSS      int64 // peak RSS of `catsrv import`, 0 when unknown
	dbBytes        int64
	startup        time.Duration
	rssAfterStart  int64
	peakRSS        int64
	cells          []cell
	chat           *chatStats   // nil when not measured
	chatMulti      *chatStats   // chat over several instances on one database; nil when not measured
	multiRSS       []int64      // peak RSS of each of those instances
	ingest         *ingestStats // nil when not measured
	agent          *agentStats  // nil when not measured
}

func (r *report) sectionName() string { return r.backend + "-" + strings.ToLower(r.scale) }

// targets of the issue, by scale.
type targets struct {
	warehouseP50, warehouseP99, rawP50, fastP50 time.Duration
	rssBytes                                    int64
}

func (r *report) targets() targets {
	t := targets{warehouseP50: 5 * time.Millisecond, warehouseP99: 20 * time.Millisecond, rawP50: 300 * time.Millisecond,
		fastP50: 5 * time.Millisecond, rssBytes: 256 << 20}
	if r.backend == "postgres" {
		t.rawP50 = 150 * time.Millisecond
	}
	if r.lines >= 10_000_000 {
		// At 10M /all_warehouse keeps 1M's bounds and the server 384 MiB;
		// the other routes get ten times (metrics twice) their 1M bounds.
		t.fastP50, t.rssBytes = 10*time.Millisecond, 384<<20
		t.rawP50 *= 10
	}
	return t
}

// worst returns the largest p50 and p99 over the cells that pass keep.
func (r *report) worst(keep func(cell) bool) (p50, p99 time.Duration, where string) {
	for _, c := range r.cells {
		if !keep(c) {
			continue
		}
		if c.stats.p50 > p50 {
			p50, where = c.stats.p50, c.route+" "+c.mix
		}
		p99 = max(p99, c.stats.p99)
	}
	return p50, p99, where
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (r *report) markdown() string {
	var b strings.Builder
	t := r.targets()
	rate := float64(r.lines) / max(r.importTime.Seconds(), 1e-9)
	fmt.Fprintf(&b, "### %s, %s interactions\n\n", backendTitle(r.backend), r.scale)
	fmt.Fprintf(&b, "Measured %s on %s; %d concurrent keep-alive connections over loopback",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), r.machine, r.workers)
	if r.gomemlimit != "" {
		fmt.Fprintf(&b, "; server run with GOMEMLIMIT=%s", r.gomemlimit)
	}
	b.WriteString(".\n\n")
	b.WriteString("| target | goal | measured | |\n|---|---|---|---|\n")
	isLimited := func(c cell) bool { return c.limit == dashboardLimit || c.limit == 0 && !listRoute(c.route) }
	wp50, wp99, wwhere := r.worst(func(c cell) bool { return c.route == "/all_warehouse" && c.limit == dashboardLimit })
	if wwhere == "" {
		fmt.Fprintf(&b, "| /all_warehouse p50 and p99, worst mix, limit=100 | ≤ %s, ≤ %s | not measured in this run | |\n", ms(t.warehouseP50), ms(t.warehouseP99))
	} else {
		fmt.Fprintf(&b, "| /all_warehouse p50, worst mix, limit=100 | ≤ %s | %s (%s) | %s |\n", ms(t.warehouseP50), ms(wp50), wwhere, verdict(wp50 <= t.warehouseP50))
		fmt.Fprintf(&b, "| /all_warehouse p99, worst mix, limit=100 | ≤ %s | %s | %s |\n", ms(t.warehouseP99), ms(wp99), verdict(wp99 <= t.warehouseP99))
	}
	rp50, _, rwhere := r.worst(func(c cell) bool { return (c.route == "/all" || c.route == "/all_legacy") && c.limit == dashboardLimit })
	if rwhere == "" {
		fmt.Fprintf(&b, "| /all and /all_legacy p50, worst mix, limit=100 | ≤ %s | not measured in this run | |\n", ms(t.rawP50))
	} else {
		fmt.Fprintf(&b, "| /all and /all_legacy p50, worst mix, limit=100 | ≤ %s | %s (%s) | %s |\n", ms(t.rawP50), ms(rp50), rwhere, verdict(rp50 <= t.rawP50))
	}
	fp50, _, fwhere := r.worst(func(c cell) bool {
		return (strings.HasPrefix(c.route, "/metrics/") || c.route == "/questions" || c.route == "/answers") && isLimited(c)
	})
	if fwhere == "" {
		fmt.Fprintf(&b, "| /metrics/*, /questions, /answers p50, worst | ≤ %s | not measured in this run | |\n", ms(t.fastP50))
	} else {
		fmt.Fprintf(&b, "| /metrics/*, /questions, /answers p50, worst | ≤ %s | %s (%s) | %s |\n", ms(t.fastP50), ms(fp50), fwhere, verdict(fp50 <= t.fastP50))
	}
	up50, _, uwhere := r.worst(func(c cell) bool { return c.route == "/usage" || c.route == "/feedback" })
	if uwhere == "" {
		fmt.Fprintf(&b, "| /usage and /feedback p50, worst mix, 100 groups | ≤ %s | not measured in this run | |\n", ms(t.warehouseP50))
	} else {
		fmt.Fprintf(&b, "| /usage and /feedback p50, worst mix, 100 groups | ≤ %s | %s (%s) | %s |\n", ms(t.warehouseP50), ms(up50), uwhere, verdict(up50 <= t.warehouseP50))
	}
	if r.importTime > 0 {
		fmt.Fprintf(&b, "| import | ≥ 100000 lines/s | %.0f lines/s (%s) | %s |\n", rate, r.importTime.Round(time.Millisecond), verdict(rate >= 100_000))
		if r.importRSS > 0 {
			fmt.Fprintf(&b, "| import peak RSS | ≤ 256 MiB | %.0f MiB | %s |\n", mib(r.importRSS), verdict(r.importRSS <= 256<<20))
		}
	} else {
		b.WriteString("| import | ≥ 100000 lines/s | not measured (database reused) | |\n")
	}
	fmt.Fprintf(&b, "| server peak RSS (VmHWM) | ≤ %d MiB | %.0f MiB (%.0f MiB after start-up) | %s |\n",
		t.rssBytes>>20, mib(r.peakRSS), mib(r.rssAfterStart), verdict(r.peakRSS <= t.rssBytes))
	fmt.Fprintf(&b, "| database size on disk | — | %.0f MiB | |\n", mib(r.dbBytes))
	fmt.Fprintf(&b, "| server start-up to ready | — | %s | |\n", r.startup.Round(time.Millisecond))
	b.WriteString(r.chatRow())
	b.WriteString(r.chatTargetRows())
	b.WriteString(r.agentRow())
	b.WriteString(r.ingestRow())
	b.WriteString("\n")
	b.WriteString(r.routeTable())
	return b.String()
}

// routeTable sums the cells up per route for the document (the metric
// routes in one row): the worst mix's p50 (and which mix) and the worst
// p99 with a limit (or, for the metric routes, which take none, without),
// and the worst p50 of the whole lists. cellTable has every cell.
func (r *report) routeTable() string {
	if len(r.cells) == 0 {
		return ""
	}
	type row struct {
		route               string
		mixes               int
		p50, p99, whole     time.Duration
		p50Mix, wholeMix    string
		hasLimited, hasFull bool
	}
	var rows []*row
	byRoute := map[string]*row{}
	for _, c := range r.cells {
		route := c.route
		if strings.HasPrefix(route, "/metrics/") {
			route = "/metrics/*"
		}
		w := byRoute[route]
		if w == nil {
			w = &row{route: route}
			byRoute[route] = w
			rows = append(rows, w)
		}
		if c.limit == 0 && listRoute(c.route) {
			w.hasFull = true
			if c.stats.p50 >= w.whole {
				w.whole, w.wholeMix = c.stats.p50, c.mix
			}
			continue
		}
		w.mixes++
		w.hasLimited = true
		if c.stats.p50 >= w.p50 {
			w.p50, w.p50Mix = c.stats.p50, c.mix
			if route != c.route {
				w.p50Mix = strings.TrimPrefix(c.route, "/metrics/") + ", " + c.mix
			}
		}
		w.p99 = max(w.p99, c.stats.p99)
	}
	var b strings.Builder
	b.WriteString("| route | mixes | p50, worst mix | p99, worst mix | whole lists: p50, worst mix |\n|---|---|---|---|---|\n")
	for _, w := range rows {
		p50, p99, whole := "—", "—", "—"
		if w.hasLimited {
			p50, p99 = fmt.Sprintf("%s (%s)", ms(w.p50), w.p50Mix), ms(w.p99)
		}
		if w.hasFull {
			whole = fmt.Sprintf("%s (%s)", ms(w.whole), w.wholeMix)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", w.route, w.mixes, p50, p99, whole)
	}
	b.WriteString("\n")
	return b.String()
}

// cellTable is every route × mix × limit measured, for the terminal.
func (r *report) cellTable() string {
	if len(r.cells) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| route | mix | limit | p50 | p99 | req/s | response bytes | requests |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %d | %d |\n", c.route, c.mix, limitName(c.limit),
			ms(c.stats.p50), ms(c.stats.p99), c.stats.perSec, c.stats.bytes, c.stats.requests)
	}
	b.WriteString("\n")
	return b.String()
}

// chatRow is the summary row of the chat measurement.
func (r *report) chatRow() string {
	if r.chat == nil {
		return "| chat throughput, legacy mode | — | not measured in this run | |\n"
	}
	c := r.chat
	models := make([]string, 0, len(c.byModel))
	for m, n := range c.byModel {
		models = append(models, fmt.Sprintf("%s %d", m, n))
	}
	slices.Sort(models)
	note := ""
	if c.cutShort {
		note = ", cut short by the time budget"
	}
	return fmt.Sprintf("| chat throughput, legacy mode, %d users | — | %.1f chats/s, p50 %s, p99 %s (%d chats, %d continuing a conversation; answered by %s%s) | |\n"+
		"| every chat stored | total_interactions + chats | +%d for %d chats (%d warm-up) | %s |\n",
		c.users, c.perSec, ms(c.p50), ms(c.p99), c.chats, c.continued, strings.Join(models, ", "), note,
		c.stored, c.chats+c.warmUps, c.warmUps, verdict(c.storedOK))
}

// chatTargetRows are the chat targets on PostgreSQL: one instance
// with 32 users at ≥ 800 chats/s and p99 ≤ 100 ms, several instances on
// one database at ≥ 1000 chats/s together.
func (r *report) chatTargetRows() string {
	if r.backend != "postgres" {
		return ""
	}
	var b strings.Builder
	if c := r.chat; c != nil {
		fmt.Fprintf(&b, "| chat, 1 instance, %d users | ≥ 800 chats/s, p99 ≤ 100 ms | %.1f chats/s, p50 %s, p99 %s | %s |\n",
			c.users, c.perSec, ms(c.p50), ms(c.p99), verdict(c.perSec >= 800 && c.p99 <= 100*time.Millisecond))
	}
	c := r.chatMulti
	if c == nil {
		b.WriteString("| chat, several instances on one database | ≥ 1000 chats/s | not measured in this run | |\n")
		return b.String()
	}
	rss := make([]string, len(r.multiRSS))
	for k, n := range r.multiRSS {
		rss[k] = fmt.Sprintf("%.0f", mib(n))
	}
	fmt.Fprintf(&b, "| chat, %d instances on one database, %d users | ≥ 1000 chats/s | %.1f chats/s, p50 %s, p99 %s (%d chats; +%d stored for %d, %s; instance peak RSS %s MiB) | %s |\n",
		c.instances, c.users, c.perSec, ms(c.p50), ms(c.p99), c.chats, c.stored, c.chats+c.warmUps, storedVerdict(c.storedOK),
		strings.Join(rss, ", "), verdict(c.perSec >= 1000 && c.storedOK))
	return b.String()
}

func listRoute(path string) bool {
	return path == "/questions" || path == "/answers" || strings.HasPrefix(path, "/all")
}

func backendTitle(b string) string {
	if b == "postgres" {
		return "PostgreSQL"
	}
	return "SQLite"
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// describeMachine names the CPU model and core count.
func describeMachine() string {
	model := runtime.GOARCH
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores, %s, %s", runtime.NumCPU(), model, runtime.Version())
}

// writeSection replaces the text between the section's markers in the
// markdown file, or appends the section when the markers are missing.
func writeSection(path, name, text string) error {
	begin := "<!-- catbench:" + name + ":begin -->"
	end := "<!-- catbench:" + name + ":end -->"
	old, err := os.ReadFile(path) //nolint:gosec // the document the operator named
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	doc := string(old)
	block := begin + "\n" + text + end
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i >= 0 && j > i {
		doc = doc[:i] + block + doc[j+len(end):]
	} else {
		if doc != "" && !strings.HasSuffix(doc, "\n\n") {
			doc += "\n"
		}
		doc += block + "\n"
	}
	return os.WriteFile(path, []byte(doc), 0o600) //nolint:gosec // the document the operator named
}
