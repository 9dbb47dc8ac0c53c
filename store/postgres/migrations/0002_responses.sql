-- Stored responses, in the shape store.Responses describes: a response
-- lists its turns by position after those of its base; a turn's body is
-- kept once per content hash.
CREATE TABLE responses (
	id         text PRIMARY KEY,
	owner      text NOT NULL,
	expires_at bigint NOT NULL,
	inputs     integer NOT NULL,
	turns      integer NOT NULL,
	base       text REFERENCES responses (id),
	hidden     boolean NOT NULL DEFAULT false,
	body       bytea NOT NULL
);
CREATE INDEX responses_expiry ON responses (expires_at) WHERE NOT hidden;
CREATE INDEX responses_base ON responses (base) WHERE base IS NOT NULL;
CREATE INDEX responses_hidden ON responses (id) WHERE hidden;

CREATE TABLE turns (
	hash bytea PRIMARY KEY,
	body bytea NOT NULL
);

CREATE TABLE response_turns (
	response_id text NOT NULL REFERENCES responses (id) ON DELETE CASCADE,
	position    integer NOT NULL,
	hash        bytea NOT NULL REFERENCES turns (hash),
	PRIMARY KEY (response_id, position)
);
CREATE INDEX response_turns_hash ON response_turns (hash);
