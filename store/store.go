// Package store persists what Parley must not lose across a restart: music
// tasks and their pending callback deliveries, the stored responses of the
// responses dialect, the client keys managed through the admin API, and the
// usage ledger that budgets and usage reports are counted from. Tasks,
// Responses, Keys and Ledger are the contracts; each backend is a package
// of its own beside this one, and every backend passes the one contract
// suite in store/storetest:
//
//   - store/sqlite, the default: an embedded pure-Go database in one file
//     under data_dir, for a single process;
//   - store/postgres: a PostgreSQL database shared by a fleet of replicas.
//
// A fleet shares work that must happen once by leases rather than by a
// leader: a replica claims the tasks it polls and the callbacks it delivers
// for a while (ClaimTasks, ClaimDeliveries), and what a replica that died
// had claimed is claimable again when its lease runs out. No replica is
// special.
//
// The store keeps no business rules: who owns a task or a response, what a
// task's states mean and what a key may spend belong to their services; the
// rules here are that a finished task is final and that a revoked key
// stays as it was revoked.
package store

import (
	"context"
	"errors"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// ErrNotFound is returned for an id the store does not hold.
var ErrNotFound = errors.New("store: not found")

// ErrExists is returned when creating a task or a response whose id is
// taken, or a managed key whose name or digest is.
var ErrExists = errors.New("store: already exists")

// Store is everything a backend keeps.
type Store interface {
	Tasks
	Responses
	Keys
	Ledger
	Close() error
}

// Tasks stores music tasks and their callback deliveries.
type Tasks interface {
	// CreateTask stores a new task, due to be polled at once.
	CreateTask(ctx context.Context, t *parleyv1.Task) error
	// Task returns one task, or ErrNotFound.
	Task(ctx context.Context, id string) (*parleyv1.Task, error)
	// Tasks returns the tasks among ids that exist, in no order.
	Tasks(ctx context.Context, ids []string) ([]*parleyv1.Task, error)
	// UpdateTask replaces a task that is still in progress, and reports
	// whether it did: a finished task is final, so two writers racing to
	// finish it cannot both win. A delivery, when given, is recorded in
	// the same transaction, so that a finished task's callback survives
	// any crash after the update.
	UpdateTask(ctx context.Context, t *parleyv1.Task, d *Delivery) (bool, error)
	// ClaimTasks takes up to limit tasks in progress that nobody holds
	// (never claimed, or their lease ended by now), oldest lease first,
	// and holds them until now+lease: until then no other claim returns
	// them, whichever process asks. A caller that wants every due task
	// claims until it gets fewer than limit.
	ClaimTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*parleyv1.Task, error)
	// HoldTasks moves the leases of the tasks in progress among ids to
	// until, in one write: longer for work that outlasts a claim, or back
	// to now to give them up. Unknown and finished tasks are left as they
	// are.
	HoldTasks(ctx context.Context, until time.Time, ids ...string) error
	// ClaimDeliveries takes up to limit pending deliveries due by now,
	// earliest first, and moves them to now+lease, so that no other claim
	// returns them before then: the caller records the attempt's outcome
	// with SaveDelivery, and a caller that dies leaves the delivery due
	// again when the lease ends (callbacks are at least once).
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// SaveDelivery records the outcome of a delivery attempt.
	SaveDelivery(ctx context.Context, d *Delivery) error
	// Delivery returns the delivery of a task, or ErrNotFound.
	Delivery(ctx context.Context, taskID string) (*Delivery, error)
	// RecentTasks returns up to limit tasks, most recently updated first,
	// each with its callback delivery when it has one; before, when not
	// zero, keeps only tasks updated before it (to page back).
	RecentTasks(ctx context.Context, limit int, before time.Time) ([]TaskView, error)
}

// DeliveryState is where a callback delivery stands.
type DeliveryState int

// Delivery states.
const (
	DeliveryPending   DeliveryState = iota // to be attempted at NextAt
	DeliveryDone                           // the receiver answered 2xx
	DeliveryAbandoned                      // every attempt failed
)

// Delivery is the callback of one finished task.
type Delivery struct {
	TaskID    string
	URL       string
	State     DeliveryState
	Attempts  int
	NextAt    time.Time
	LastError string
}

// TaskView is a task with its callback delivery (nil without one).
type TaskView struct {
	Task     *parleyv1.Task
	Delivery *Delivery
}
