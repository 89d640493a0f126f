-- journal.db, schema version 3: a check result says whether it decided the verdict.
--
-- advisory: 1 for a check that is advice for the person and never decides the verdict (a
--   semantic check whose decision model is not qualified for it); 0 for one that decides. Rows
--   recorded by earlier versions decided (no advisory check was recorded before this column).

ALTER TABLE check_results ADD COLUMN advisory INTEGER NOT NULL DEFAULT 0
    CHECK (advisory IN (0, 1));
