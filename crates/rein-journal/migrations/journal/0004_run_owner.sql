-- journal.db, schema version 4: a run knows the process that runs it.
--
-- owner_pid, owner_started: the process id and its start time (clock ticks since boot, from
--   /proc; 0 where the platform does not tell) of the process that began the run. A run still
--   `running` whose owner has ended was cut off (a killed bench, a crash): the next run to begin
--   records it as aborted with an `interrupted` event. Rows of earlier versions have no owner and
--   are left as they are (nothing says whether their process still runs).

ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_started INTEGER;

-- The owner is part of what never changes once the run began.
DROP TRIGGER runs_finish_once;
CREATE TRIGGER runs_finish_once BEFORE UPDATE ON runs
WHEN NOT (
    NEW.id IS OLD.id AND NEW.kind IS OLD.kind AND NEW.mission_id IS OLD.mission_id
    AND NEW.contract_sha IS OLD.contract_sha AND NEW.workspace IS OLD.workspace
    AND NEW.model IS OLD.model AND NEW.meta IS OLD.meta AND NEW.started_at IS OLD.started_at
    AND NEW.owner_pid IS OLD.owner_pid AND NEW.owner_started IS OLD.owner_started
    AND OLD.status = 'running' AND NEW.status <> 'running')
BEGIN SELECT RAISE(ABORT, 'runs: a run is finished once and nothing else about it changes'); END;
