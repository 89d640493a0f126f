-- chat.db, schema version 2: the runs of chat turns. A turn run is what happens between a
-- person's message and Rein's answer; at most one runs per conversation at a time, and one that
-- a process left running (it crashed, or was killed) is closed as interrupted, never resumed.

CREATE TABLE turn_runs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    status          TEXT    NOT NULL DEFAULT 'running' CHECK (status IN
                            ('running', 'answered', 'proposed', 'stopped', 'interrupted',
                             'failed')),
    note            TEXT,
    started_at      INTEGER NOT NULL,
    ended_at        INTEGER,
    CHECK ((status = 'running') = (ended_at IS NULL))
);
-- One active turn per conversation: a second message while one runs is refused, not queued.
CREATE UNIQUE INDEX turn_runs_one_running ON turn_runs (conversation_id)
    WHERE status = 'running';

CREATE TRIGGER turn_runs_transitions BEFORE UPDATE ON turn_runs
WHEN NOT (NEW.id IS OLD.id AND NEW.conversation_id IS OLD.conversation_id
          AND NEW.started_at IS OLD.started_at AND OLD.status = 'running')
BEGIN
    SELECT RAISE(ABORT, 'turn_runs: only a running turn may end, once');
END;
CREATE TRIGGER turn_runs_no_delete BEFORE DELETE ON turn_runs
BEGIN SELECT RAISE(ABORT, 'turn_runs cannot be deleted'); END;
