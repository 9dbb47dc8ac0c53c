// Package songgen is the wire side of the asynchronous music task
// interface (spec part 1, paths under /songgen): its envelope, its task,
// song and lyrics objects, the submit and query bodies, and the same
// interface spoken toward a music upstream. The task lifecycle (relay,
// polling, callbacks, storage) belongs to the tasks package.
//
// Choices where the spec says "not shown", following the relays this
// interface comes from:
//   - Timestamps (submit_time, start_time, finish_time) are Unix seconds.
//     finish_time is 0 until the task is SUCCESS or FAIL; progress is
//     "<n>%" and never goes down; a finished task shows "100%".
//   - The song mode follows from the fields present (DecodeMusic); empty
//     strings count as absent, as clients send every field with empty
//     defaults. chirp-v4 is accepted by default because the spec's own
//     example sends it; the accepted mv values are configurable.
//   - Upload and concatenation tasks show action MUSIC, and their data is
//     an array of song objects (the registered audio as one song, the
//     joined song): the spec's action knows only MUSIC and LYRICS and its
//     clients pick how to read data by action. A batch query filtered on
//     MUSIC includes them. notify_hook is accepted on every submit.
//   - A lyrics task's data is always a lyrics object; before the lyrics
//     exist its text is empty and its status "running" ("error" after a
//     failure), the music service's own words ("complete" when done).
//   - A batch query returns, in the order asked and without repeats, the
//     caller's tasks among the ids that pass the action filter; unknown
//     ids, and other keys' tasks, are left out, not errors. At most
//     MaxFetchIDs ids per query.
//
// Every failure is the envelope with data null, a code other than success
// and a fitting HTTP status; a submit that fails creates no task:
//
//	invalid_json          400  body empty or not a JSON object
//	missing_field         400  a required field is absent (named)
//	invalid_field         400  wrong type or value (named), e.g. mv
//	invalid_mode          400  a song body fits no mode or mixes them
//	notify_hook_refused   400  the hook resolves to a private address
//	unauthorized          401  no key or an unknown key
//	task_not_found        404  unknown task id, or another key's task
//	request_too_large     413  body over limits.max_body_bytes
//	rate_limited          429  the music service asks to slow down
//	upstream_rejected     400  the music service refused the request
//	upstream_error        502  the music service failed or said nonsense
//	upstream_unavailable  503  no music service configured, or unreachable
//	upstream_timeout      504  the music service did not answer in time
//	internal_error        500
//
// Toward a music upstream the same interface is spoken (EncodeSubmit,
// DecodeSubmitReply, EncodeFetch, DecodeFetchReply). Its status words are
// mapped by MapStatus, including the ones real relays use (NOT_START,
// SUBMITTED, QUEUED, IN_PROGRESS, SUCCESS, FAILURE, UNKNOWN). Its task
// ids stay private: clients only ever see Parley's.
package songgen
