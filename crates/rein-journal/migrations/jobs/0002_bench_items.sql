-- jobs.db, schema version 2: the work items of a bench job.
--
-- A bench is a job (kind 'bench', workspace = its output folder's canonical path); each run it
-- does is an item (suite, task, model, repeat, seed). Items move queued -> running -> done (with
-- the result record) | interrupted. An interrupted item is kept as it is, for the record; the run
-- is redone as a new item with the next attempt number. Items are never deleted.

CREATE TABLE bench_items (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     INTEGER NOT NULL REFERENCES jobs (id),
    suite      TEXT    NOT NULL,
    task       TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    repeat     INTEGER NOT NULL CHECK (repeat >= 0),
    seed       INTEGER NOT NULL,
    attempt    INTEGER NOT NULL CHECK (attempt >= 1),
    state      TEXT    NOT NULL DEFAULT 'queued'
                       CHECK (state IN ('queued', 'running', 'done', 'interrupted')),
    result     TEXT    CHECK (result IS NULL OR json_valid(result)),
    journal_run INTEGER,
    note       TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (job_id, suite, task, model, repeat, attempt),
    CHECK ((state = 'done') = (result IS NOT NULL))
);
CREATE INDEX bench_items_by_job ON bench_items (job_id, state);

CREATE TRIGGER bench_items_transitions BEFORE UPDATE ON bench_items
WHEN NOT (
    NEW.id IS OLD.id AND NEW.job_id IS OLD.job_id AND NEW.suite IS OLD.suite
    AND NEW.task IS OLD.task AND NEW.model IS OLD.model AND NEW.repeat IS OLD.repeat
    AND NEW.seed IS OLD.seed AND NEW.attempt IS OLD.attempt AND NEW.created_at IS OLD.created_at
    AND (
        (OLD.state = 'queued' AND NEW.state = 'running')
        OR (OLD.state = 'running' AND NEW.state IN ('done', 'interrupted'))
    ))
BEGIN
    SELECT RAISE(ABORT, 'bench_items: allowed are queued -> running, running -> done|interrupted');
END;
CREATE TRIGGER bench_items_no_delete BEFORE DELETE ON bench_items
BEGIN SELECT RAISE(ABORT, 'bench_items cannot be deleted'); END;
