package colindex

// putter adds coded rows to new CATs on a goroutine of its own, so that
// a snapshot's rows are coded (their values looked up in the
// dictionaries, on the snapshot reader's callback) and put in their
// columns (time, combination, question and answer, the totals and the
// cube) at the same time: two stages of the first build instead of one.
// The two touch disjoint parts of a catIndex: coding its dicts, putting
// everything else. Rows of a CAT are put in the order they were coded.
type putter struct {
	buf  []putRow
	full chan []putRow // buffers to put, in order
	free chan []putRow // emptied buffers
	done chan struct{}
}

// putRow is one coded row for a new CAT.
type putRow struct {
	c      *catIndex
	micros int64
	codes  [dimensions]uint32
}

// putterRows is how many rows go to the putter at a time.
const putterRows = 4096

func newPutter() *putter {
	p := &putter{full: make(chan []putRow, 2), free: make(chan []putRow, 3), done: make(chan struct{})}
	for range 3 {
		p.free <- make([]putRow, 0, putterRows)
	}
	p.buf = <-p.free
	go func() {
		defer close(p.done)
		for rows := range p.full {
			for k := range rows {
				r := &rows[k]
				r.c.addCoded(r.micros, &r.codes)
				r.c = nil
			}
			p.free <- rows[:0]
		}
	}()
	return p
}

// add queues a coded row of a new CAT.
func (p *putter) add(c *catIndex, micros int64, codes *[dimensions]uint32) {
	p.buf = append(p.buf, putRow{c: c, micros: micros, codes: *codes})
	if len(p.buf) == putterRows {
		p.full <- p.buf
		p.buf = <-p.free
	}
}

// wait puts the queued rows and returns once every row is put; the
// putter is done then.
func (p *putter) wait() {
	if len(p.buf) > 0 {
		p.full <- p.buf
	}
	p.buf = nil
	close(p.full)
	<-p.done
}
