package postgres

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/tasks"
)

// A snapshot (tasks.Snapshot) is read as it comes off the wire: its bytes
// are the row's own, valid until the next row, which is what a snapshot
// promises (valid only during the reader's call). Reading a task to show
// it then copies nothing and decodes only its header, and reads only the
// columns the reader shows.

// snapshotColumns are what a snapshot is read as (scanSnapshot), for
// show (nil: everything): the artifacts only when it shows them, the
// history only when it shows some. A column left out is read as empty.
func snapshotColumns(show *tasks.View) string {
	artifacts, history := "w_artifacts", "w_history, w_nhistory"
	if show != nil && !show.IncludeArtifacts {
		artifacts = "NULL::bytea"
	}
	if show != nil && show.HistoryLength != nil && *show.HistoryLength <= 0 {
		history = "NULL::bytea, 0"
	}
	return "id, owner_id, state, status_ms, w_head, w_status, " + artifacts + ", w_metadata, " + history
}

// snapshotFields is the number of columns of snapshotColumns.
const snapshotFields = 10

// scanSnapshot reads the snapshot in rows' current row, from its column
// from on.
func scanSnapshot(rows pgx.Rows, from int) (tasks.Snapshot, error) {
	raw, fds := rows.RawValues(), rows.FieldDescriptions()
	if len(raw) < from+snapshotFields {
		return tasks.Snapshot{}, fmt.Errorf("postgres: a snapshot row of %d columns", len(raw))
	}
	raw, fds = raw[from:], fds[from:]
	status, err := rawInt(fds[3], raw[3])
	if err != nil {
		return tasks.Snapshot{}, err
	}
	nhistory, err := rawInt(fds[9], raw[9])
	if err != nil {
		return tasks.Snapshot{}, err
	}
	var wire [5][]byte // head, status, artifacts, metadata, history
	for i := range wire {
		if wire[i], err = rawBytes(fds[4+i], raw[4+i]); err != nil {
			return tasks.Snapshot{}, err
		}
	}
	return tasks.Snapshot{ID: raw[0], OwnerID: raw[1], State: a2a.TaskState(raw[2]), StatusTime: fromMS(status),
		Wire: tasks.WireJSON{Head: wire[0], Status: wire[1], Artifacts: wire[2], Metadata: wire[3], History: wire[4], NHistory: int(nhistory)}}, nil
}

// rawBytes reads a bytea column's raw value: itself in the binary format
// (pgx's, for bytea), decoded from hex in the text format (the simple
// protocol's, when a URL asks for it).
func rawBytes(fd pgconn.FieldDescription, b []byte) ([]byte, error) {
	if fd.Format != pgx.TextFormatCode || b == nil {
		return b, nil
	}
	if !bytes.HasPrefix(b, []byte(`\x`)) {
		return nil, fmt.Errorf("postgres: a bytea value in an unknown text form")
	}
	return hex.AppendDecode(nil, b[2:])
}

// rawInt reads an integer column's raw value, in the format it came in.
func rawInt(fd pgconn.FieldDescription, b []byte) (int64, error) {
	if fd.Format == pgx.TextFormatCode {
		return strconv.ParseInt(string(b), 10, 64)
	}
	switch len(b) {
	case 8:
		return int64(binary.BigEndian.Uint64(b)), nil
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	}
	return 0, fmt.Errorf("postgres: an integer of %d bytes", len(b))
}
