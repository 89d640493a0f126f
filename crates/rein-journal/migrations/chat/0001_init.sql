-- chat.db, schema version 1: conversations with a person, their turns, and approval cards.
-- A conversation is not a verified run: nothing here is written to the journal.

CREATE TABLE conversations (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace  TEXT    NOT NULL CHECK (length(workspace) > 0),
    title      TEXT    NOT NULL DEFAULT '',
    model      TEXT,
    created_at INTEGER NOT NULL
);

CREATE TABLE turns (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq             INTEGER NOT NULL CHECK (seq > 0),
    role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT    NOT NULL,
    meta            TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    created_at      INTEGER NOT NULL,
    UNIQUE (conversation_id, seq)
);

CREATE TRIGGER turns_no_update BEFORE UPDATE ON turns
BEGIN SELECT RAISE(ABORT, 'turns is append-only: rows cannot be changed'); END;
CREATE TRIGGER turns_no_delete BEFORE DELETE ON turns
BEGIN SELECT RAISE(ABORT, 'turns is append-only: rows cannot be deleted'); END;

-- An approval card: one proposed mutation shown to the person, bound to the call's fingerprint
-- and to the pre-image of the file, alive until expires_at.
CREATE TABLE approvals (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER REFERENCES conversations (id),
    workspace       TEXT    NOT NULL CHECK (length(workspace) > 0),
    call_id         TEXT    NOT NULL CHECK (length(call_id) > 0),
    tool            TEXT    NOT NULL,
    arguments       TEXT    NOT NULL CHECK (json_valid(arguments)),
    fingerprint     TEXT    NOT NULL
                            CHECK (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'),
    path            TEXT,
    before_sha      TEXT,
    after_sha       TEXT,
    diff            TEXT    NOT NULL DEFAULT '',
    status          TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN
                            ('pending', 'approved', 'denied', 'expired', 'applied', 'failed')),
    note            TEXT,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL CHECK (expires_at > created_at),
    decided_at      INTEGER,
    finished_at     INTEGER,
    CHECK ((status = 'pending') = (decided_at IS NULL)),
    CHECK ((status IN ('applied', 'failed')) = (finished_at IS NOT NULL))
);
CREATE INDEX approvals_by_status ON approvals (status, expires_at);
-- One live card per call.
CREATE UNIQUE INDEX approvals_one_live_per_call ON approvals (workspace, call_id)
    WHERE status IN ('pending', 'approved');

CREATE TRIGGER approvals_transitions BEFORE UPDATE ON approvals
WHEN NOT (
    NEW.id IS OLD.id AND NEW.conversation_id IS OLD.conversation_id
    AND NEW.workspace IS OLD.workspace AND NEW.call_id IS OLD.call_id AND NEW.tool IS OLD.tool
    AND NEW.arguments IS OLD.arguments AND NEW.fingerprint IS OLD.fingerprint
    AND NEW.path IS OLD.path AND NEW.before_sha IS OLD.before_sha
    AND NEW.after_sha IS OLD.after_sha AND NEW.diff IS OLD.diff
    AND NEW.created_at IS OLD.created_at AND NEW.expires_at IS OLD.expires_at
    AND (
        (OLD.status = 'pending' AND NEW.status IN ('approved', 'denied', 'expired'))
        OR (OLD.status = 'approved' AND NEW.status IN ('applied', 'failed')
            AND NEW.decided_at IS OLD.decided_at)
    ))
BEGIN
    SELECT RAISE(ABORT, 'approvals: only pending -> approved, denied or expired, and approved -> applied or failed, are allowed');
END;
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals cannot be deleted'); END;
