package postgres

import (
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/commands"
	"github.com/kfa-project/kfa/storage"
)

// The schema's Tasks, in tasks: TasksByMessage is its (owner_id,
// message_id) key, TasksWorking its partial index of the states the
// schema lists, TasksOfDiscussion tasks_discussion, and TasksByOwnerState
// counts in the owner's counters.

// statesSQL is states as a SQL list of literals (the schema's, made once:
// a literal lets the planner use the partial index).
func statesSQL(ix *storage.Index[commands.Task]) string {
	var parts []string
	for _, s := range commands.StatesIn(ix) {
		parts = append(parts, "'"+strings.ReplaceAll(string(s), "'", "''")+"'")
	}
	if len(parts) == 0 {
		return "false"
	}
	return "t.state IN (" + strings.Join(parts, ", ") + ")"
}

// writeTask queues t, which was old (nil: a new task): a new one whole
// with its counters; a transition as what it changed (the history is
// rewritten only when a plan changed it) and its counters' moves.
func writeTask(w *pgWrites, old, t *commands.Task) error {
	if old == nil {
		if err := w.exec("INSERT INTO tasks ("+taskColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			t.ID, t.ContextID, t.OwnerID, t.DiscussionID, t.MessageID, string(t.State), t.StatusTime.UnixMilli(),
			t.CreatedAt.UnixMilli(), nz(t.Wire.Head), nz(t.Wire.Status), nz(t.Wire.Artifacts), nz(t.Wire.Metadata),
			nz(t.Wire.History), t.Wire.NHistory); err != nil {
			return err
		}
		countTask(w.acc, &t.Task, +1)
		return nil
	}
	sets := []string{"state = $2", "status_ms = $3"}
	args := []any{t.ID, string(t.State), t.StatusTime.UnixMilli()}
	for _, c := range []struct {
		col      string
		old, new []byte
	}{
		{"w_head", old.Wire.Head, t.Wire.Head}, {"w_status", old.Wire.Status, t.Wire.Status},
		{"w_artifacts", old.Wire.Artifacts, t.Wire.Artifacts}, {"w_metadata", old.Wire.Metadata, t.Wire.Metadata},
		{"w_history", old.Wire.History, t.Wire.History},
	} {
		if string(c.old) != string(c.new) {
			args = append(args, nz(c.new))
			sets = append(sets, c.col+" = $"+strconv.Itoa(len(args)))
		}
	}
	if old.Wire.NHistory != t.Wire.NHistory {
		args = append(args, t.Wire.NHistory)
		sets = append(sets, "w_nhistory = $"+strconv.Itoa(len(args)))
	}
	if err := w.exec("UPDATE tasks SET "+strings.Join(sets, ", ")+" WHERE id = $1", args...); err != nil {
		return err
	}
	if old.State != t.State {
		countTask(w.acc, &old.Task, -1)
		countTask(w.acc, &t.Task, +1)
	}
	return nil
}

func init() {
	mapped[commands.Tasks] = &table[commands.Task]{
		kind: commands.Tasks, name: "tasks", key: []column{{"t.id", convText}},
		cols: taskColumns, brief: headerColumns,
		read: func(row pgx.Row, brief bool) (commands.Task, error) {
			if brief {
				h, err := scanHeader(row)
				return commands.Task{Task: h}, err
			}
			r, err := scanTask(row)
			return commands.Task{Task: r.t, Wire: r.wire}, err
		},
		owner: "t.owner_id",
		indexes: map[storage.Ix]tindex{
			commands.TasksByMessage:    {cols: []column{{"t.owner_id", convText}, {"t.message_id", convText}}},
			commands.TasksWorking:      {cols: []column{{"t.discussion_id", convText}}, where: statesSQL(commands.TasksWorking)},
			commands.TasksOfDiscussion: {cols: []column{{"t.discussion_id", convText}, {"t.owner_id", convText}}},
		},
		counted: func(ix storage.Ix, prefix storage.Key) (string, bool) {
			if ix != commands.TasksByOwnerState || len(prefix) != 2 {
				return "", false
			}
			return ownerCounters(prefix[0], "", a2a.TaskState(prefix[1]))[1], true
		},
		write: writeTask,
	}
}
