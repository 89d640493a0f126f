-- jobs.db, schema version 1: long-running jobs and their states.
--
-- A job found 'running' when the store is opened, whose owning process is gone, becomes
-- 'interrupted'; it is never resumed silently (a person requeues it).

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT    NOT NULL CHECK (length(kind) > 0),
    title         TEXT    NOT NULL DEFAULT '',
    workspace     TEXT,
    spec          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(spec)),
    state         TEXT    NOT NULL DEFAULT 'queued'
                          CHECK (state IN ('queued', 'running', 'interrupted', 'done', 'failed')),
    progress      TEXT    CHECK (progress IS NULL OR json_valid(progress)),
    result        TEXT    CHECK (result IS NULL OR json_valid(result)),
    error         TEXT,
    owner_pid     INTEGER,
    owner_started INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    started_at    INTEGER,
    finished_at   INTEGER,
    CHECK ((state = 'running') = (owner_pid IS NOT NULL)),
    CHECK ((state IN ('done', 'failed')) = (finished_at IS NOT NULL))
);
CREATE INDEX jobs_by_state ON jobs (state, id);

-- Every state change, written by trigger so no path can skip it.
CREATE TABLE job_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     INTEGER NOT NULL REFERENCES jobs (id),
    from_state TEXT,
    to_state   TEXT    NOT NULL,
    at         INTEGER NOT NULL
);
CREATE TRIGGER job_events_no_update BEFORE UPDATE ON job_events
BEGIN SELECT RAISE(ABORT, 'job_events is append-only: rows cannot be changed'); END;
CREATE TRIGGER job_events_no_delete BEFORE DELETE ON job_events
BEGIN SELECT RAISE(ABORT, 'job_events is append-only: rows cannot be deleted'); END;

CREATE TRIGGER jobs_created AFTER INSERT ON jobs
BEGIN INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (NEW.id, NULL, NEW.state, NEW.created_at); END;
CREATE TRIGGER jobs_state_changed AFTER UPDATE OF state ON jobs
WHEN NEW.state IS NOT OLD.state
BEGIN INSERT INTO job_events (job_id, from_state, to_state, at) VALUES (NEW.id, OLD.state, NEW.state, NEW.updated_at); END;

CREATE TRIGGER jobs_transitions BEFORE UPDATE ON jobs
WHEN NOT (
    NEW.id IS OLD.id AND NEW.kind IS OLD.kind AND NEW.title IS OLD.title
    AND NEW.workspace IS OLD.workspace AND NEW.spec IS OLD.spec
    AND NEW.created_at IS OLD.created_at
    AND (
        (OLD.state = 'queued' AND NEW.state IN ('running', 'failed'))
        OR (OLD.state = 'running' AND NEW.state IN ('running', 'done', 'failed', 'interrupted'))
        OR (OLD.state = 'interrupted' AND NEW.state IN ('queued', 'failed'))
    ))
BEGIN
    SELECT RAISE(ABORT, 'jobs: allowed are queued -> running|failed, running -> done|failed|interrupted, interrupted -> queued|failed');
END;
CREATE TRIGGER jobs_no_delete BEFORE DELETE ON jobs
BEGIN SELECT RAISE(ABORT, 'jobs cannot be deleted'); END;
