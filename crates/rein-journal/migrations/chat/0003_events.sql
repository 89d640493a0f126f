-- chat.db, schema version 3: the events of a conversation as the person saw them (the route, tool
-- calls, gate outcomes, holds, approval cards and decisions, cautions, turn ends, errors), so the
-- run viewer can show any conversation step by step. Streamed tokens are not kept (the answer is
-- a turn). Append-only.

CREATE TABLE chat_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id INTEGER NOT NULL REFERENCES conversations (id),
    seq             INTEGER NOT NULL CHECK (seq > 0),
    turn_run        INTEGER,
    type            TEXT    NOT NULL CHECK (length(type) > 0),
    event           TEXT    NOT NULL CHECK (json_valid(event)),
    at              INTEGER NOT NULL
);
CREATE INDEX chat_events_by_conversation ON chat_events (conversation_id, id);

CREATE TRIGGER chat_events_no_update BEFORE UPDATE ON chat_events
BEGIN SELECT RAISE(ABORT, 'chat_events is append-only: rows cannot be changed'); END;
CREATE TRIGGER chat_events_no_delete BEFORE DELETE ON chat_events
BEGIN SELECT RAISE(ABORT, 'chat_events is append-only: rows cannot be deleted'); END;
