package store

import bolt "go.etcd.io/bbolt"

// Bucket names. The key layout of each is described next to its writer.
var (
	bucketMeta = []byte("meta") // schema version, token secret

	bucketAgents     = []byte("agents")      // agent id -> agentRecord
	bucketCreds      = []byte("creds")       // sha256(token) -> credRecord
	bucketAgentNames = []byte("agent_names") // agents.NameKey(name) | 0 | agent id (since schema 8)
	// bucketAgentIdentities (identities.go): issuer | 0 | subject -> agent id (since schema 11)

	bucketTasks       = []byte("tasks")           // task id (16) -> taskRecord
	bucketTaskMsgIDs  = []byte("task_msgids")     // owner (16) | messageId -> task id (16)
	bucketTaskAll     = []byte("idx_task_all")    // ts | id
	bucketTaskAllSt   = []byte("idx_task_allst")  // state | ts | id
	bucketTaskByOwner = []byte("idx_task_owner")  // owner | ts | id
	bucketTaskByState = []byte("idx_task_state")  // owner | state | ts | id
	bucketTaskAllCtx  = []byte("idx_task_allctx") // ctxlen | ctx | ts | id -> owner (16) | state (1) (since schema 4; values since 6)
	bucketCounts      = []byte("counts")          // counter key -> uint64

	// bucketTaskByCtx and bucketTaskByCtxSt indexed each owner's tasks by
	// context (and state) until schema 6, which serves those listings from
	// bucketTaskAllCtx.
	bucketTaskByCtx   = []byte("idx_task_ctx")   // owner | ctxlen | ctx | ts | id
	bucketTaskByCtxSt = []byte("idx_task_ctxst") // owner | ctxlen | ctx | state | ts | id

	// bucketTaskByDisc mapped every task to its discussion until schema 3,
	// which split it into bucketDiscMembers and bucketTaskDiscWorking.
	bucketTaskByDisc      = []byte("idx_task_disc")  // discussion id (16) | task id (16) -> owner (16)
	bucketDiscMembers     = []byte("disc_members")   // discussion id (16) | owner (16) -> task ids (16 each, ascending)
	bucketTaskDiscWorking = []byte("idx_task_discw") // discussion id (16) | task id (16) -> owner (16), WORKING tasks only
	bucketRateWindows     = []byte("rate_windows")   // limit (1) | agent id (16) -> window time (8, unix ns)

	bucketDiscussions  = []byte("discussions")     // discussion id (16) -> discussionRecord
	bucketDiscByStatus = []byte("idx_disc_status") // status (1) | discussion id (16)
	bucketReplies      = []byte("replies")         // discussion id (16) | reply id (16) -> replyRecord

	// Who wrote what, and where a reply is (schema 12): the moderation of
	// an item named by id alone, and hiding everything an agent wrote.
	bucketReplyDiscs  = []byte("reply_discs")      // reply id (16) -> discussion id (16)
	bucketAuthorPosts = []byte("idx_author_posts") // author id (16) | discussion or reply id (16) -> a reply's discussion id (16), empty for a discussion
	bucketModItems    = []byte("mod_items")        // item id (16) -> moderation.Item JSON
	bucketModFlags    = []byte("mod_flags")        // item id (16) | agent id (16) -> moderation.Flag JSON
	bucketModQueue    = []byte("idx_mod_queue")    // item id (16), for the items waiting for review
	bucketModLog      = []byte("mod_log")          // entry id (16) -> moderation.Entry JSON: the audit log, append-only

	bucketInbox        = []byte("inbox")         // agent id (16) | entry id (16) -> inboxRecord
	bucketInboxUnacked = []byte("idx_inbox_new") // agent id (16) | entry id (16)

	bucketRecords = []byte("records") // record id -> record JSON
	// bucketFeed was the records' change feed until schema 9, which
	// carried it into the change log (see migrateFeedToLog).
	bucketFeed = []byte("feed") // seq (8) -> feed entry JSON

	bucketPushConfigs = []byte("push_configs")   // task id (16) | config id -> pushConfigRecord
	bucketPushOutbox  = []byte("push_outbox")    // delivery id (16) -> deliveryRecord
	bucketPushDue     = []byte("idx_push_due")   // next attempt (8, ms) | delivery id (16), pending only
	bucketPushDest    = []byte("idx_push_dest")  // destination | 0 | next attempt (8, ms) | delivery id (16), pending only (schema 10)
	bucketPushByState = []byte("idx_push_state") // state (1) | delivery id (16)
	bucketPushByTask  = []byte("idx_push_task")  // task id (16) | delivery id (16)
	bucketSignKeys    = []byte("sign_keys")      // created (8, ms) | key id -> signKeyRecord

	bucketLog = []byte("log") // seq (8) -> logRecord: the change log (schema 7)
	// The records' change feed is the log's record events (schema 9):
	// bucketLogRecords indexes them, bucketLogRecordIDs names each
	// record's latest, and bucketLogDroppable lists those a reader of the
	// feed starting from the beginning does not need (a record's entry
	// with a later one, a deletion), which trimming may remove.
	bucketLogRecords   = []byte("log_records")    // seq (8)
	bucketLogRecordIDs = []byte("log_record_ids") // record id -> seq (8) of its latest entry
	bucketLogDroppable = []byte("log_droppable")  // seq (8)
	bucketLogCursors   = []byte("log_cursors")    // follower name -> cursorRecord (schema 9)
)

// Keys of the meta bucket.
var (
	metaSchema = []byte("schema")
	metaSecret = []byte("secret")
	// metaFeedTrimmed was the newest feed sequence retention removed,
	// until schema 9.
	metaFeedTrimmed = []byte("feed_trimmed")
	// metaLogTrimmed is the newest change log sequence trimming removed
	// (8 bytes, big-endian; absent: none).
	metaLogTrimmed = []byte("log_trimmed")
	// metaLogRecordsTrimmed is the newest record event trimming removed
	// (8 bytes; absent: none): the records feed's trimmed point.
	metaLogRecordsTrimmed = []byte("log_records_trimmed")
	// metaLogTrimFloor is where the last trim's walk of the log stopped
	// (8 bytes): every event up to it that is not a record's is gone, so
	// the next walk starts after it instead of over the records' entries
	// that stay.
	metaLogTrimFloor = []byte("log_trim_floor")
)

// appendBuckets are the buckets whose keys arrive mostly in order (ULIDs,
// timestamps, sequence numbers, or in order within an owner's or a
// discussion's range). Their pages are split 90% full instead of bbolt's
// default half, so an append leaves full pages behind it: a smaller file,
// fewer pages per list page, and fewer pages written per commit.
var appendBuckets = [][]byte{
	bucketTasks, bucketTaskAll, bucketTaskAllSt, bucketTaskByOwner, bucketTaskByState,
	bucketTaskAllCtx, bucketTaskDiscWorking, bucketCounts, bucketDiscussions, bucketDiscByStatus, bucketReplies,
	bucketInbox, bucketInboxUnacked, bucketReplyDiscs, bucketModLog,
}

// appendFill is the fill of split pages in appendBuckets.
const appendFill = 0.9

// tuneTx sets the fill of the append buckets for a write transaction
// (bbolt keeps it per bucket handle, so every write transaction sets it).
func tuneTx(tx *bolt.Tx) {
	for _, name := range appendBuckets {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = appendFill
		}
	}
}
