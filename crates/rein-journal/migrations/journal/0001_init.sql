-- journal.db, schema version 1: what happened in verified runs, append-only.
--
-- Append-only tables refuse UPDATE and DELETE by trigger. The few rows that do change (a run or
-- an attempt is finished once; a change moves through the apply protocol) are guarded by
-- triggers that allow exactly those transitions and nothing else.

CREATE TABLE acceptance_specs (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    mission_id     TEXT    NOT NULL CHECK (length(mission_id) > 0),
    sha256         TEXT    NOT NULL UNIQUE
                           CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    canonical_json TEXT    NOT NULL CHECK (json_valid(canonical_json)),
    created_at     INTEGER NOT NULL
);

CREATE TABLE artifacts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    sha256     TEXT    NOT NULL UNIQUE
                       CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    bytes      BLOB    NOT NULL,
    size       INTEGER NOT NULL CHECK (size = length(bytes)),
    created_at INTEGER NOT NULL
);

CREATE TABLE runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT    NOT NULL CHECK (kind IN ('mission', 'bench', 'tool')),
    mission_id   TEXT,
    contract_sha TEXT    REFERENCES acceptance_specs (sha256),
    workspace    TEXT,
    model        TEXT,
    meta         TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    status       TEXT    NOT NULL DEFAULT 'running'
                         CHECK (status IN ('running', 'pass', 'fail', 'aborted')),
    verdict      TEXT    CHECK (verdict IS NULL OR json_valid(verdict)),
    CHECK ((status = 'running') = (finished_at IS NULL))
);

CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    seq         INTEGER NOT NULL CHECK (seq > 0),
    strategy    TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT,
    CHECK ((finished_at IS NULL) = (outcome IS NULL)),
    UNIQUE (run_id, seq)
);

CREATE TABLE steps (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            INTEGER NOT NULL REFERENCES runs (id),
    seq               INTEGER NOT NULL CHECK (seq > 0),
    attempt_id        INTEGER REFERENCES attempts (id),
    kind              TEXT    NOT NULL,
    thought           TEXT,
    action            TEXT,
    call_id           TEXT,
    reply             TEXT,
    detail            TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(detail)),
    prompt_tokens     INTEGER CHECK (prompt_tokens IS NULL OR prompt_tokens >= 0),
    completion_tokens INTEGER CHECK (completion_tokens IS NULL OR completion_tokens >= 0),
    elapsed_ms        INTEGER CHECK (elapsed_ms IS NULL OR elapsed_ms >= 0),
    created_at        INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

-- Every decision of the execution gate. A call id may appear several times in one scope (asked,
-- then approved and executed, then replayed), but it is bound to one fingerprint, and at most one
-- row per call id records the effect ('executed').
CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      INTEGER REFERENCES runs (id),
    workspace   TEXT,
    scope_key   TEXT    NOT NULL,
    call_id     TEXT    NOT NULL CHECK (length(call_id) > 0),
    tool        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL CHECK (json_valid(arguments)),
    fingerprint TEXT    NOT NULL
                        CHECK (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'),
    outcome     TEXT    NOT NULL CHECK (outcome IN ('invalid', 'denied', 'approval-required',
                        'budget-exhausted', 'executed', 'replayed', 'id-conflict')),
    reason      TEXT    NOT NULL DEFAULT '',
    result      TEXT    NOT NULL CHECK (json_valid(result)),
    created_at  INTEGER NOT NULL,
    CHECK ((run_id IS NULL) <> (workspace IS NULL)),
    CHECK (scope_key = CASE WHEN run_id IS NOT NULL THEN 'run:' || run_id
                            ELSE 'workspace:' || workspace END)
);
CREATE INDEX tool_calls_by_call ON tool_calls (scope_key, call_id);
CREATE UNIQUE INDEX tool_calls_one_effect ON tool_calls (scope_key, call_id)
    WHERE outcome = 'executed';

CREATE TABLE check_results (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER NOT NULL REFERENCES runs (id),
    attempt_id INTEGER REFERENCES attempts (id),
    seq        INTEGER NOT NULL CHECK (seq > 0),
    kind       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    passed     INTEGER NOT NULL CHECK (passed IN (0, 1)),
    facts      TEXT    NOT NULL CHECK (json_valid(facts)),
    created_at INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     INTEGER REFERENCES runs (id),
    kind       TEXT    NOT NULL CHECK (length(kind) > 0),
    payload    TEXT    NOT NULL CHECK (json_valid(payload)),
    created_at INTEGER NOT NULL
);
CREATE INDEX events_by_run ON events (run_id, id);

-- The exactly-once apply protocol: an intent is recorded before the file is touched, then
-- resolved once (committed, not applied, or conflict); a committed change may later be undone,
-- which happens when the change that undoes it is committed.
CREATE TABLE changes (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key   TEXT    NOT NULL,
    call_id     TEXT    NOT NULL CHECK (length(call_id) > 0),
    run_id      INTEGER REFERENCES runs (id),
    workspace   TEXT    NOT NULL CHECK (length(workspace) > 0),
    path        TEXT    NOT NULL CHECK (length(path) > 0),
    before_sha  TEXT    REFERENCES artifacts (sha256),
    after_sha   TEXT    REFERENCES artifacts (sha256),
    state       TEXT    NOT NULL DEFAULT 'intent'
                        CHECK (state IN ('intent', 'committed', 'not_applied', 'conflict', 'undone')),
    found_sha   TEXT,
    found_absent INTEGER NOT NULL DEFAULT 0 CHECK (found_absent IN (0, 1)),
    created_at  INTEGER NOT NULL,
    resolved_at INTEGER,
    undone_at   INTEGER,
    undo_of     INTEGER REFERENCES changes (id),
    CHECK (before_sha IS NOT NULL OR after_sha IS NOT NULL),
    CHECK ((state = 'intent') = (resolved_at IS NULL)),
    CHECK ((state = 'undone') = (undone_at IS NOT NULL)),
    CHECK (state = 'conflict' OR (found_sha IS NULL AND found_absent = 0)),
    CHECK (NOT (found_absent = 1 AND found_sha IS NOT NULL)),
    CHECK (scope_key = CASE WHEN run_id IS NOT NULL THEN 'run:' || run_id
                            ELSE 'workspace:' || workspace END)
);
CREATE INDEX changes_by_workspace ON changes (workspace, id);
CREATE INDEX changes_by_call ON changes (scope_key, call_id);
-- A call has at most one effect: a second change for the same call id is only possible after
-- the first was found not applied.
CREATE UNIQUE INDEX changes_one_per_call ON changes (scope_key, call_id)
    WHERE state <> 'not_applied';
-- One unresolved intent per file at a time: recovery must know what a file should hold.
CREATE UNIQUE INDEX changes_one_intent_per_path ON changes (workspace, path)
    WHERE state = 'intent';
-- A change is undone at most once (to restore it again, undo the undo).
CREATE UNIQUE INDEX changes_one_undo ON changes (undo_of)
    WHERE undo_of IS NOT NULL AND state IN ('intent', 'committed', 'undone');

-- Append-only tables.
CREATE TRIGGER acceptance_specs_no_update BEFORE UPDATE ON acceptance_specs
BEGIN SELECT RAISE(ABORT, 'acceptance_specs is append-only: a frozen contract cannot change'); END;
CREATE TRIGGER acceptance_specs_no_delete BEFORE DELETE ON acceptance_specs
BEGIN SELECT RAISE(ABORT, 'acceptance_specs is append-only: a frozen contract cannot be deleted'); END;
CREATE TRIGGER acceptance_specs_no_replace BEFORE INSERT ON acceptance_specs
WHEN EXISTS (SELECT 1 FROM acceptance_specs WHERE sha256 = NEW.sha256)
BEGIN SELECT RAISE(ABORT, 'acceptance_specs: this contract is already stored'); END;

CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
BEGIN SELECT RAISE(ABORT, 'artifacts is append-only: stored content cannot change'); END;
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts
BEGIN SELECT RAISE(ABORT, 'artifacts is append-only: stored content cannot be deleted'); END;
CREATE TRIGGER artifacts_no_replace BEFORE INSERT ON artifacts
WHEN EXISTS (SELECT 1 FROM artifacts WHERE sha256 = NEW.sha256)
BEGIN SELECT RAISE(ABORT, 'artifacts: this content is already stored'); END;

CREATE TRIGGER steps_no_update BEFORE UPDATE ON steps
BEGIN SELECT RAISE(ABORT, 'steps is append-only: rows cannot be changed'); END;
CREATE TRIGGER steps_no_delete BEFORE DELETE ON steps
BEGIN SELECT RAISE(ABORT, 'steps is append-only: rows cannot be deleted'); END;

CREATE TRIGGER tool_calls_no_update BEFORE UPDATE ON tool_calls
BEGIN SELECT RAISE(ABORT, 'tool_calls is append-only: rows cannot be changed'); END;
CREATE TRIGGER tool_calls_no_delete BEFORE DELETE ON tool_calls
BEGIN SELECT RAISE(ABORT, 'tool_calls is append-only: rows cannot be deleted'); END;
-- A call id is bound to the first fingerprint seen for it (rows that record an invalid call or
-- an id conflict do not bind).
CREATE TRIGGER tool_calls_one_fingerprint BEFORE INSERT ON tool_calls
WHEN NEW.outcome NOT IN ('invalid', 'id-conflict') AND EXISTS (
    SELECT 1 FROM tool_calls
    WHERE scope_key = NEW.scope_key AND call_id = NEW.call_id
      AND outcome NOT IN ('invalid', 'id-conflict') AND fingerprint <> NEW.fingerprint)
BEGIN SELECT RAISE(ABORT, 'tool_calls: this call id is bound to another fingerprint'); END;
CREATE TRIGGER tool_calls_one_effect_guard BEFORE INSERT ON tool_calls
WHEN NEW.outcome = 'executed' AND EXISTS (
    SELECT 1 FROM tool_calls
    WHERE scope_key = NEW.scope_key AND call_id = NEW.call_id AND outcome = 'executed')
BEGIN SELECT RAISE(ABORT, 'tool_calls: this call id has already been executed'); END;

CREATE TRIGGER check_results_no_update BEFORE UPDATE ON check_results
BEGIN SELECT RAISE(ABORT, 'check_results is append-only: rows cannot be changed'); END;
CREATE TRIGGER check_results_no_delete BEFORE DELETE ON check_results
BEGIN SELECT RAISE(ABORT, 'check_results is append-only: rows cannot be deleted'); END;

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only: rows cannot be changed'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only: rows cannot be deleted'); END;

-- Runs and attempts are finished exactly once; nothing else about them changes.
CREATE TRIGGER runs_finish_once BEFORE UPDATE ON runs
WHEN NOT (
    NEW.id IS OLD.id AND NEW.kind IS OLD.kind AND NEW.mission_id IS OLD.mission_id
    AND NEW.contract_sha IS OLD.contract_sha AND NEW.workspace IS OLD.workspace
    AND NEW.model IS OLD.model AND NEW.meta IS OLD.meta AND NEW.started_at IS OLD.started_at
    AND OLD.status = 'running' AND NEW.status <> 'running')
BEGIN SELECT RAISE(ABORT, 'runs: a run is finished once and nothing else about it changes'); END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs
BEGIN SELECT RAISE(ABORT, 'runs cannot be deleted'); END;

CREATE TRIGGER attempts_finish_once BEFORE UPDATE ON attempts
WHEN NOT (
    NEW.id IS OLD.id AND NEW.run_id IS OLD.run_id AND NEW.seq IS OLD.seq
    AND NEW.strategy IS OLD.strategy AND NEW.started_at IS OLD.started_at
    AND OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'attempts: an attempt is finished once and nothing else about it changes'); END;
CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
BEGIN SELECT RAISE(ABORT, 'attempts cannot be deleted'); END;

-- Changes: only the transitions of the apply protocol.
CREATE TRIGGER changes_transitions BEFORE UPDATE ON changes
WHEN NOT (
    NEW.id IS OLD.id AND NEW.scope_key IS OLD.scope_key AND NEW.call_id IS OLD.call_id
    AND NEW.run_id IS OLD.run_id AND NEW.workspace IS OLD.workspace AND NEW.path IS OLD.path
    AND NEW.before_sha IS OLD.before_sha AND NEW.after_sha IS OLD.after_sha
    AND NEW.created_at IS OLD.created_at AND NEW.undo_of IS OLD.undo_of
    AND (
        (OLD.state = 'intent' AND NEW.state IN ('committed', 'not_applied')
            AND NEW.resolved_at IS NOT NULL AND NEW.undone_at IS NULL
            AND NEW.found_sha IS NULL AND NEW.found_absent = 0)
        OR (OLD.state = 'intent' AND NEW.state = 'conflict'
            AND NEW.resolved_at IS NOT NULL AND NEW.undone_at IS NULL)
        OR (OLD.state = 'committed' AND NEW.state = 'undone'
            AND NEW.resolved_at IS OLD.resolved_at AND NEW.undone_at IS NOT NULL
            AND NEW.found_sha IS NULL AND NEW.found_absent = 0)
    ))
BEGIN
    SELECT RAISE(ABORT, 'changes: only intent -> committed, not_applied or conflict, and committed -> undone, are allowed');
END;
CREATE TRIGGER changes_no_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'changes cannot be deleted'); END;
-- Committing an undo marks the change it undoes as undone, in the same transaction.
CREATE TRIGGER changes_undo_commit AFTER UPDATE OF state ON changes
WHEN NEW.state = 'committed' AND NEW.undo_of IS NOT NULL
BEGIN
    UPDATE changes SET state = 'undone', undone_at = NEW.resolved_at WHERE id = NEW.undo_of;
END;
