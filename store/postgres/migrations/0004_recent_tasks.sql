-- The console lists tasks by their last update, newest first, and pages
-- back by it: the index serves that order and its ties (by id) as is.
CREATE INDEX tasks_recent ON tasks (updated_at, id);
