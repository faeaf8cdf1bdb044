package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Follower is what IndexLag reads of an index that follows the database
// (colindex.Index).
type Follower interface {
	// Stats reports the rows applied and the feed position.
	Stats() (rows int, highWater int64)
	// FeedPosition reports the feed position and how many rows above it
	// the index counts already.
	FeedPosition() (high int64, held int)
	// CurrentAt is when the last successful refresh began.
	CurrentAt() time.Time
}

// Backlog counts the rows stored above a high-water mark
// (sqlstore.Store.CountSince).
type Backlog func(ctx context.Context, after int64) (int64, error)

// backlogTimeout bounds the database read of one scrape.
const backlogTimeout = 2 * time.Second

// indexLag is the collector of the index's lag.
type indexLag struct {
	idx                    Follower
	backlog                Backlog
	now                    func() time.Time
	rows, lagRows, lagSecs *prometheus.Desc
}

// IndexLag returns a collector of how far idx is behind the database,
// read at each scrape: catsrv_index_rows (rows the index holds),
// catsrv_index_lag_rows (rows stored in the database that it has not
// applied yet) and catsrv_index_lag_seconds (0 when it is not behind, else
// the time since the start of its last successful refresh: how old its
// view of the database is). When the database cannot be read the two lag
// metrics are left out of the scrape.
func IndexLag(idx Follower, backlog Backlog) prometheus.Collector {
	return &indexLag{
		idx: idx, backlog: backlog, now: time.Now,
		rows:    prometheus.NewDesc("catsrv_index_rows", "Api interactions the column index holds.", nil, nil),
		lagRows: prometheus.NewDesc("catsrv_index_lag_rows", "Api interactions stored in the database that the column index has not applied yet.", nil, nil),
		lagSecs: prometheus.NewDesc("catsrv_index_lag_seconds", "0 when the column index holds every stored row, else the time since its last successful refresh began.", nil, nil),
	}
}

// Describe sends the three descriptions.
func (l *indexLag) Describe(ch chan<- *prometheus.Desc) {
	ch <- l.rows
	ch <- l.lagRows
	ch <- l.lagSecs
}

// Collect reads the index, then counts the rows above its mark.
func (l *indexLag) Collect(ch chan<- prometheus.Metric) {
	rows, _ := l.idx.Stats()
	high, held := l.idx.FeedPosition()
	currentAt := l.idx.CurrentAt()
	ch <- prometheus.MustNewConstMetric(l.rows, prometheus.GaugeValue, float64(rows))
	ctx, cancel := context.WithTimeout(context.Background(), backlogTimeout)
	defer cancel()
	above, err := l.backlog(ctx, high)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(l.lagRows, err)
		return
	}
	behind := max(0, above-int64(held))
	secs := 0.0
	if behind > 0 {
		secs = max(0, l.now().Sub(currentAt).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(l.lagRows, prometheus.GaugeValue, float64(behind))
	ch <- prometheus.MustNewConstMetric(l.lagSecs, prometheus.GaugeValue, secs)
}
