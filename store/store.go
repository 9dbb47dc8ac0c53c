// Package store persists what Parley must not lose across a restart: music
// tasks and their pending callback deliveries, and the stored responses of
// the responses dialect. Tasks and Responses are the contracts; SQLite, an
// embedded pure-Go database in a file under data_dir, is the default
// implementation, and a server database can implement the same interfaces.
// The store keeps no business rules: who owns a task or a response and
// what a task's states mean belong to their services; the one rule here is
// that a finished task is final.
package store

import (
	"context"
	"errors"
	"time"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// ErrNotFound is returned for an id the store does not hold.
var ErrNotFound = errors.New("store: not found")

// ErrExists is returned when creating a task whose id is taken.
var ErrExists = errors.New("store: already exists")

// Tasks stores music tasks and their callback deliveries.
type Tasks interface {
	// CreateTask stores a new task.
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
	// ActiveTasks returns up to limit tasks in progress whose ids sort
	// after the given one, in id order, for paging through them all.
	ActiveTasks(ctx context.Context, after string, limit int) ([]*parleyv1.Task, error)
	// DueDeliveries returns up to limit pending deliveries due by now,
	// earliest first.
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]*Delivery, error)
	// SaveDelivery records the outcome of a delivery attempt.
	SaveDelivery(ctx context.Context, d *Delivery) error
	// Delivery returns the delivery of a task, or ErrNotFound.
	Delivery(ctx context.Context, taskID string) (*Delivery, error)
	Close() error
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
