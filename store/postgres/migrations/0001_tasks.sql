-- Music tasks and their callback deliveries. Times are Unix nanoseconds,
-- as in every backend. A task in progress is claimed by the replica that
-- polls it until lease_until; a pending delivery is claimed by moving
-- next_at past the attempt.
CREATE TABLE tasks (
	id          text PRIMARY KEY,
	owner       text NOT NULL,
	status      integer NOT NULL,
	updated_at  bigint NOT NULL,
	lease_until bigint NOT NULL DEFAULT 0,
	body        bytea NOT NULL
);
CREATE INDEX tasks_due ON tasks (lease_until, id) WHERE status = 1;

CREATE TABLE deliveries (
	task_id    text PRIMARY KEY REFERENCES tasks (id),
	url        text NOT NULL,
	state      integer NOT NULL,
	attempts   integer NOT NULL,
	next_at    bigint NOT NULL,
	last_error text NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_at) WHERE state = 0;
