package store

import (
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/changelog"
	"github.com/kfa-project/kfa/discussions"
)

// taskStates are the states a key byte can name, in stateByte order.
var taskStates = []a2a.TaskState{
	a2a.TaskStateUnspecified, a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted,
	a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateInputRequired, a2a.TaskStateRejected,
	a2a.TaskStateAuthRequired,
}

// Counts are the store's counters, read without walking any bucket: cheap
// enough for every metrics scrape.
type Counts struct {
	Tasks        int                   // every task
	TasksByState map[a2a.TaskState]int // states with at least one task
	Discussions  int
	Open         int // discussions waiting for a qualifying reply
	Answered     int
	Agents       int // including revoked agents
}

func readCounts(tx *bolt.Tx) Counts {
	counts := tx.Bucket(bucketCounts)
	c := Counts{
		Tasks:        readCounter(counts, counterKey(bucketTaskAll, nil)),
		TasksByState: map[a2a.TaskState]int{},
		Discussions:  readCounter(counts, keyDiscCount),
		Open:         readCounter(counts, discCountKey(discussions.StatusOpen)),
		Answered:     readCounter(counts, discCountKey(discussions.StatusAnswered)),
		Agents:       readCounter(counts, keyAgentCount),
	}
	for _, st := range taskStates {
		if n := readCounter(counts, counterKey(bucketTaskAllSt, []byte{stateByte(st)})); n > 0 {
			c.TasksByState[st] = n
		}
	}
	return c
}

// Counts returns the counters in one read transaction.
func (s *DB) Counts() (Counts, error) {
	var c Counts
	err := s.db.View(func(tx *bolt.Tx) error {
		c = readCounts(tx)
		return nil
	})
	return c, err
}

// WaitingTask names the task that has waited longest for a reply.
type WaitingTask struct {
	ID      string
	OwnerID string
	Since   time.Time // its status timestamp: when it was asked
}

// Stats describe the file and its contents, from one read transaction.
type Stats struct {
	Counts
	Path          string
	SchemaVersion int
	SizeBytes     int64 // the file as a backup would copy it
	PageSize      int
	FreePages     int // free pages ready for reuse
	PendingPages  int // pages freed by transactions that readers may still see
	Records       int // knowledge records
	// LogPosition is the change log's newest position (0: no change yet).
	LogPosition changelog.Position
	// OldestWaiting is the longest waiting WORKING task; nil when none waits.
	OldestWaiting *WaitingTask
}

// Stats returns the file's statistics. It walks the pages of the records
// bucket to count them; everything else is a counter or one cursor step.
func (s *DB) Stats() (Stats, error) {
	st := Stats{Path: s.path, PageSize: s.db.Info().PageSize}
	err := s.db.View(func(tx *bolt.Tx) error {
		st.Counts = readCounts(tx)
		st.SchemaVersion = schemaOf(tx)
		st.SizeBytes = tx.Size()
		st.Records = tx.Bucket(bucketRecords).Stats().KeyN
		st.LogPosition = changelog.Position{Seq: tx.Bucket(bucketLog).Sequence()}
		// idx_task_allst is state | ts | id: the first key of the WORKING
		// range is the oldest waiting task.
		p := []byte{stateByte(a2a.TaskStateWorking)}
		if k, _ := tx.Bucket(bucketTaskAllSt).Cursor().Seek(p); len(k) == 1+24 && k[0] == p[0] {
			w := &WaitingTask{ID: idString(k[9:]), Since: fromMS(binary.BigEndian.Uint64(k[1:9]))}
			if t, err := getTask(tx, w.ID); err == nil {
				w.OwnerID = t.OwnerID
			}
			st.OldestWaiting = w
		}
		return nil
	})
	bs := s.db.Stats()
	st.FreePages, st.PendingPages = bs.FreePageN, bs.PendingPageN
	return st, err
}

// BoltStats are bbolt's own counters: transactions, the freelist and the
// work of write transactions, cumulative since the file was opened.
type BoltStats struct {
	ReadTx        int // read transactions started
	OpenReadTx    int // read transactions open now
	FreePages     int
	PendingPages  int
	FreeBytes     int // bytes in free and pending pages
	FreelistBytes int // bytes the freelist itself takes

	PageAllocs    int64 // pages allocated by write transactions
	PageAllocSize int64 // bytes allocated
	Cursors       int64
	Nodes         int64
	NodeDerefs    int64
	Rebalances    int64
	RebalanceTime time.Duration
	Splits        int64
	Spills        int64
	SpillTime     time.Duration
	Writes        int64 // page writes to the file
	WriteTime     time.Duration
}

// BoltStats returns bbolt's counters. It takes no transaction.
func (s *DB) BoltStats() BoltStats {
	st := s.db.Stats()
	tx := &st.TxStats
	return BoltStats{
		ReadTx: st.TxN, OpenReadTx: st.OpenTxN,
		FreePages: st.FreePageN, PendingPages: st.PendingPageN, FreeBytes: st.FreeAlloc, FreelistBytes: st.FreelistInuse,
		PageAllocs: tx.GetPageCount(), PageAllocSize: tx.GetPageAlloc(), Cursors: tx.GetCursorCount(),
		Nodes: tx.GetNodeCount(), NodeDerefs: tx.GetNodeDeref(), Rebalances: tx.GetRebalance(),
		RebalanceTime: tx.GetRebalanceTime(), Splits: tx.GetSplit(), Spills: tx.GetSpill(), SpillTime: tx.GetSpillTime(),
		Writes: tx.GetWrite(), WriteTime: tx.GetWriteTime(),
	}
}

// FileSize is the size of the database as of now (what a backup copies).
func (s *DB) FileSize() (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Size()
		return nil
	})
	return n, err
}
