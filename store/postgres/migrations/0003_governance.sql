-- Managed client keys and the usage ledger, in the shapes store.Keys and
-- store.Ledger describe. A key's record is its deterministic protobuf
-- encoding, without the secret; revoked_at is set once it is revoked. A
-- usage record keeps its UTC day as text, computed when it is written, so
-- that grouping by day is the same here as in every other backend. Text
-- that is listed in order sorts by bytes ("C"), as in SQLite, whatever the
-- database's collation.
CREATE TABLE managed_keys (
	name       text COLLATE "C" PRIMARY KEY,
	digest     bytea NOT NULL UNIQUE,
	revoked_at bigint,
	updated_at bigint NOT NULL,
	body       bytea NOT NULL
);

CREATE TABLE usage_records (
	request_id         text PRIMARY KEY,
	time               bigint NOT NULL,
	day                text COLLATE "C" NOT NULL,
	key                text COLLATE "C" NOT NULL,
	model              text COLLATE "C" NOT NULL,
	upstream           text COLLATE "C" NOT NULL,
	dialect            text COLLATE "C" NOT NULL,
	operation          text COLLATE "C" NOT NULL,
	status             integer NOT NULL,
	input_tokens       bigint NOT NULL,
	output_tokens      bigint NOT NULL,
	cache_read_tokens  bigint NOT NULL,
	cache_write_tokens bigint NOT NULL,
	reasoning_tokens   bigint NOT NULL,
	cost_nanos         bigint NOT NULL,
	duration_nanos     bigint NOT NULL,
	ttft_nanos         bigint NOT NULL
);
CREATE INDEX usage_records_time ON usage_records (time);
CREATE INDEX usage_records_key_time ON usage_records (key, time);
