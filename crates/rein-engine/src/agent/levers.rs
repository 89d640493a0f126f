//! Levers: harness-side helps for a small model, each switchable per run (`--lever NAME=on|off`)
//! and recorded with the run, so the bench can measure each one as an ablation. A lever may
//! change what the model sees or how it is asked; none changes what the judge checks.

use serde_json::{json, Value};

/// One lever. Names are stable and kebab-case: they are written in journals and bench results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lever {
    /// `table_stats` and `calculate` join the tools of a mission that reads files, so sums and
    /// counts come from a tool, not from the model's arithmetic.
    FactsTools,
    /// The frozen contract's checks, as a numbered list of plain requirements, in the task.
    Requirements,
    /// A reply that repeats an earlier call exactly is drawn again with another seed and a
    /// higher temperature, instead of spending a step of the no-progress cap; with constrained
    /// decoding the last draw may not name the repeated tool at all.
    RepeatEscape,
    /// The actor profile's repeat penalty (1.1) applies to actions. Off samples actions (and
    /// the deliverables they carry) with no penalty; on is today's profile.
    RepeatPenalty,
    /// A later attempt never makes the deliverable worse: it starts from the current
    /// deliverable with the failed checks' facts and asks for the smallest edit; a candidate
    /// that fails a check the previous version passed is undone through the journal.
    MonotoneAttempts,
    /// A `write_json` tool for a JSON deliverable with a schema: its `document` is the JSON
    /// itself, constrained by the contract's schema during decoding; Rein serialises it.
    WriteJson,
    /// A `write_sections` tool for a Markdown deliverable with required headings: one text
    /// field per heading, in order, all required; Rein writes the heading lines itself.
    WriteSections,
    /// After each step the contract's deterministic checks run on the files as they are, and
    /// the model is told which are not met yet (the facts a model may be told, never an
    /// expected value), so it knows what is left instead of repeating what is done.
    Checklist,
    /// Chat prompts are rendered with the Jinja template stored in the GGUF (as Hugging Face
    /// renders it: Qwen's default system prompt included when a prompt has none, `tool`
    /// messages as tool responses) instead of llama.cpp's built-in matcher. Applies to
    /// embedded models; for a prompt that starts with a system message the two agree.
    GgufTemplate,
    /// After each step the model reads the calls of the run that ran so far and the task
    /// again, at the end of its prompt, where a small model attends most.
    TaskReminder,
    /// A `read_file` of a CSV, TSV or JSON-lines file also returns the count, sum, min and max
    /// of each numeric column over the whole file, computed by Rein: the 1.5B read a six-row
    /// column and wrote its sum as 72 where it is 64, and never called `table_stats` for it.
    TableFacts,
    /// After a reply cut off at the reply cap, the next reply's text parameters are capped at
    /// [`SHORT_TEXT_MAX_CHARS`] in the action schema (constrained decoding), so the call fits:
    /// an edit names a shorter `old_text`, a long file is written in parts. The 1.5B repeated a
    /// cut `edit_file` five times in a row until the run's timeout.
    ShortAfterCut,
    /// An applied write of the deliverable is read back by Rein at once and the model gets the
    /// file as it now is on disk with the write's result, which counts as reading it back for
    /// the finish rule: the 1.5B called a refused finish three times in a row (57-64 s each)
    /// instead of the `read_file` the refusal asked for.
    ReadBack,
    /// A `rewrite_section` tool for a Markdown deliverable with required headings: name one
    /// heading and give its new text; Rein keeps the rest of the file and writes it as
    /// `write_sections` would. The 1.5B's `edit_file` fixes missed their `old_text` (not
    /// found, found twice, cut off) in most of its retries.
    RewriteSection,
    /// A `write_sections` field whose section must state a number on a line the task quotes
    /// with a placeholder (`'Total hours: N'`, read by the contract's own numeric check) must
    /// hold that line's label followed by a digit (constrained decoding): the number is still
    /// the model's, and the judge checks it as before. The 1.5B left out the total line in every
    /// first write of desk_task seed 0 (three draws), and fixing it took a second attempt.
    StatedLines,
    /// The text of each `write_sections` field and `rewrite_section`'s `text` cannot hold a
    /// line that starts, after blanks, with `#` or `\#` (constrained decoding, an anchored JSON
    /// Schema `pattern`): the headings are Rein's. The 1.5B wrote `### Tasks` and `### Risks`
    /// inside the Tasks field of desk_task (seed 1), then copied the escaped `\### Tasks` back
    /// into each later write until the run's timeout.
    PlainBodies,
    /// Once this attempt has written the deliverable, the finish rules would accept it, and
    /// every check the `checklist` may show is met on the files as they are, the next step
    /// offers `finish` alone (constrained decoding) and the model is told so. The checks whose
    /// status turns on the task's answer are not consulted (they stay an oracle no step can
    /// query) and are judged after finish as always. The 1.5B's first write of desk_task seed 0
    /// passed every check, and it then read, recomputed and rewrote the report for four more
    /// steps (about six minutes) instead of finishing.
    FinishWhenMet,
    /// An extra draw of verified sampling that follows a draw `write_sections` or `write_json`
    /// refused before it could be judged (the same text under two headings, a missing field, a
    /// document that breaks the schema) is shown that draft and the refusal, as the next step
    /// would show them, and asked for the call again; after a draw cut off at the reply cap, the
    /// next draw is asked for a shorter call (with `short-after-cut`, under that lever's caps),
    /// and a first draw of those tools that was cut is drawn again so. A judged draw's failures
    /// are never told (their facts are the checklist's to give). The step after a cut call of
    /// theirs is told to shorten the fields, not to write the file in parts with `create_file`.
    /// On desk_task seeds 1, 2 and 4 the 1.5B pasted the overview under two headings in every
    /// draw of its first write (refused each time) or ran past the reply cap, and on seed 1 the
    /// generic advice after a cut sent it to a pasted `create_file`.
    ToldDraws,
    /// After a failed verdict, `finish` is not offered (constrained decoding) and is refused
    /// while the deliverable holds the very bytes that failed, when every failed check is
    /// settled by those bytes alone (a check of the run's calls or of another file can still
    /// change): judged again they would fail again. The 1.5B re-read an input and called
    /// finish on the unchanged file in its second and third attempts of five of the seven desk
    /// extract tasks, spending every attempt on one verdict.
    ChangeBeforeFinish,
    /// An executed write of a JSON deliverable returns, with its result, the entry count of each
    /// array of objects in the document as written, the sum of each numeric field and the count
    /// of each repeated text value: arithmetic on the model's own entries, never on the inputs
    /// or the expected answer. The 1.5B gave 138.62 as the total of four receipts its own
    /// document lists as summing to 211.43.
    DocumentFacts,
    /// After a failed verdict, the next attempt's feedback also quotes the lines of the frozen
    /// inputs that the failed checks compared against, with file and line number: the label
    /// line an `entries_match` field must be copied from, the lines a `numeric_consistency`
    /// value is taken from by pattern (at most eight; never for a count). Input lines the model
    /// may read itself, never a value computed from them (no sum, no count). The 1.5B wrote
    /// invoice 1's first line amount (120.00) as its total in all five doc_extract runs and,
    /// told only that entry 1 `total` is not the value on the `Total due:` line, re-read the
    /// invoice and finished on the same file.
    SourceLines,
    /// With `write_json`, each text value the contract says is copied from the inputs (a
    /// `grounded` check's JSON claim, an `entries_match` text field) is held by constrained
    /// decoding to a run of whole words of one line of the inputs this run has read whole
    /// (embedded models; the judge checks as before). The 1.5B wrote `Bayside Cleaning Ltd.`
    /// and `Quayside Books.` for vendors written without the full stop in all five doc_extract
    /// runs (the first vendor, `Northwind Paper Co.`, has one).
    CopiedStrings,
    /// A whole read of an input that an `entries_match` check copies fields from carries, first,
    /// the lines of it that start with the fields' labels, quoted with their line numbers (a
    /// label that starts several lines is not quoted). The 1.5B copied invoice 1's first line
    /// amount (120.00) as its total in four of five doc_extract runs; its `Total due:` line
    /// says 300.50.
    LabelLines,
    /// Before the first step Rein reads the mission's input files itself, whole, through the
    /// gate, and the transcript starts with those calls and their results (not where which
    /// files are read is part of the answer, nor over
    /// [`super::inputs_first::INPUTS_FIRST_MAX_CHARS`]). The 1.5B's three reads of desk_task
    /// took two of its five steps, about 35 s of 173 s. On desk_task (seeds 0-4) it passed 2
    /// of 5 with and without it.
    InputsFirst,
    /// When the prompt is trimmed to fit the context window, the steps that read an input
    /// file whole go only after every other step (the last read of each file; the last step
    /// is kept as always), and a monotone attempt's fresh start keeps them: the inputs are
    /// frozen, so their text never goes stale. With a 6,144-token window the 1.5B's desk_task
    /// trimmed its three reads in every run that took more than six steps (4 steps in each of
    /// three timed-out runs on the engine of 3 December) and then wrote a report about
    /// "reading files and writing a summary".
    KeepInputs,
    /// When the contract holds a `not_copied` check, every reply of an embedded model is decoded
    /// with the prose inputs that check reads as the texts of a copy penalty (see `no_paste`): a
    /// token that would extend a run copied from them beyond a few tokens loses logit, more the
    /// longer the run; its tables are held at their row ends only (a copied row must be followed
    /// by a word of the reply's own). On desk_task seeds 1, 2 and 4 every draw of the 1.5B's first write, at
    /// temperature 0.1 and 0.7 alike, pasted the overview under both Project summary and Goal,
    /// the CSV rows under Tasks and the meeting notes under Risks, byte for byte the same. With
    /// the quick start's other levers its first builds passed 4 of seeds 0-4 where they alone
    /// passed 2, and 8 of 0-9; the DRY build after them 2 of 0-4, Rein's own penalty holding the
    /// CSV 4 of 0-8, leaving tables free 7 of 0-9, holding them at their row ends 10 of 0-9.
    NoPaste,
    /// With `facts-tools`: before the first step Rein reads the tables the task's `table_stats`
    /// hints name and makes those calls (one per figure of a named CSV column a
    /// `numeric_consistency` check computes; a row count rides on a call over the same rows),
    /// through the gate, and the transcript starts with them, each result being the figures it
    /// gives in the requirements' words, then the task's quoted line filled with it where the
    /// check reads that line back as the figure; a figure the judge would not accept is never
    /// shown (see `stats_first`). The 1.5B made no `table_stats` call on the desk suite's report
    /// and summarize tasks, told to in the task, and wrote its own sums; given the figures in
    /// words only, it pasted the words into report-expenses instead of the task's lines.
    StatsFirst,
    /// With `finish-when-met`: once the next step would offer `finish` alone, Rein makes that
    /// call itself (through the gate, journaled as Rein's, with a summary that says so) instead
    /// of asking the model for a reply that can only be that call. What is judged is the same;
    /// the time of one decode is not spent. On the ten passes of desk_task (1.5B, the quick
    /// start's levers) the forced finish took 18-27 s of runs of 69-176 s.
    AutoFinish,
    /// With `write-sections`: a check the task lists under its section's heading (with its
    /// `table_stats` hint) is not listed again in the numbered requirements, nor hinted again
    /// after them. The task of report-gradebook listed each of its ten figures twice with two
    /// hints each: with `stats-first`, its first prompt was 5,517 tokens, over the share of the
    /// prompt budget stats-first may take.
    RequirementsOnce,
    /// The first `finish` of an attempt on a deliverable that was in the workspace before the
    /// run (a file edited in place) is held once, when the finish rules would accept it and the
    /// file has changed: the model is shown the diff of its own changes to the file so far and
    /// the task again, and asked to finish again if the diff holds every change the task asks
    /// for, else to make the one it lacks; the attempt's next finish is judged. No check the
    /// model may be told says when the last of several edits is done; the 1.5B called `finish`
    /// after the first of its two to ten edits on six of the eight desk edit tasks
    /// (edit-csv-emails: one e-mail of ten lowered). With the lever it passed 1 of the 8 (2
    /// without, on an earlier build): it re-finished unchanged after 12 of 17 reviews.
    ReviewEdits,
    /// For a task among at least [`super::prompt::FIND_INPUTS_MIN`] inputs that needs only the
    /// ones it picks (no check needs every input read), the progress note after each step counts
    /// the inputs read instead of naming the next unread one, and suggests `search_text` first.
    /// Without it the note said "read the whole of services/auth.yaml" after each read, and the
    /// 1.5B read all 22 files of search-cert-expiry one step each (step thoughts copied from the
    /// note), never searched, and named the wrong service or ran out of time on three search
    /// tasks of three. With it the 1.5B searched first, with a glob that fit no file name, and
    /// then guessed or read every file anyway (0 of 2).
    FindInputs,
    /// After a `search_text` call of the model's that ran and matched no line, Rein searches
    /// again for it, through the gate, and shows both results: a glob that left no file to
    /// search is dropped (the folder is searched whole), and a pattern no line holds is split
    /// into its words, any of which a line may hold, ignoring case. The 1.5B searched
    /// `approved amount` with the glob `*.eml` over files named `01.eml.txt`, and `tls:
    /// cert_expires: 2025-03-14` over YAML that holds the two keys on two lines and another
    /// date; both times it then guessed an answer or read every file one step at a time.
    WiderSearch,
    /// A deliverable the task spells out as "exactly N lines", each a label and a
    /// `<placeholder>`, is written as those lines: constrained decoding holds `create_file` and
    /// `replace_file` to the deliverable's path and to the lines in order, each placeholder
    /// filled with one line's text without `<` or `>` (embedded models; see `answer_lines`). The
    /// 1.5B pasted the e-mail it had found whole as the answer of search-budget-approval, the
    /// template with its placeholders as that of search-cert-expiry, and six lines of a host
    /// record for three on search-host-inventory.
    AnswerLines,
    /// In a task that picks which of its many inputs to read (as `find-inputs` tells them) and
    /// whose `inputs_read` check wants them read before the deliverable is first written, that
    /// first write is held, nothing written, while its text names an input the run has not
    /// read in full (by path, or by a file stem of three or more characters no other input
    /// shares); the model is told to read it first. The write would fail that check in every
    /// later attempt too. An input holds a write at most [`super::run::CITED_HOLDS_MAX`] times,
    /// never after the gate refused its read. The 1.5B wrote the right answer of
    /// search-hosting-renewal from a search's lines, its `File:` line naming a note it never
    /// read, and failed on that check alone in all three attempts.
    ReadCited,
    /// Before the first step of a task that picks which of its many inputs to read (as
    /// `find-inputs` tells them), Rein searches the inputs for the words of the task's
    /// description that few of them hold, through the gate, and shows the lines found: the
    /// search a person would type first (see `task_search`). Only the task's own words, never a
    /// check's; no file is ranked or named as the answer. The 1.5B searched `services` and
    /// `ram` (the folder's name, a label of the answer) on search-cert-expiry and
    /// search-host-inventory, where `cert_expires` and `postgres` name the lines that matter.
    TaskSearch,
    /// The tool `folder_stats` (the counts of `find`, `wc -l` and `fdupes` over a folder), and
    /// before the first step of a task whose contract counts files, lines or rows of its
    /// inputs, Rein's call of it on the folder the inputs share, through the gate, its result
    /// shown whole (see `folder_facts`). Facts of the frozen inputs, as `table_stats` gives;
    /// which of them answer the task stays the model's. The 1.5B wrote each CSV's character
    /// count as its row count and five letters for every year of an archive.
    FolderStats,
    /// A task that edits its deliverable in place, a text file of at most
    /// [`super::whole_rewrite::WHOLE_REWRITE_MAX_BYTES`] when the run begins, is not offered
    /// `edit_file`: the file is written whole with `replace_file`, every change the task asks
    /// for in one call, which the person still sees as one exact diff. No check the model may be
    /// told says when the last of several edits is done; the 1.5B called `finish` after the
    /// first of its two to ten `edit_file` changes on six of the eight desk edit tasks
    /// (edit-csv-emails: one e-mail of ten lowered), and each later attempt added one edit or
    /// none.
    WholeRewrite,
    /// `write_sections` gets one field per number line the task quotes for a section (with
    /// `stated-lines`' rule: the check reads that line's number back, see
    /// [`super::line_fields`]), placed after the section's own text field; the field holds the
    /// number only (constrained decoding), and Rein writes the task's line with it at the end of
    /// the section. The number stays the model's and the judge checks it as before. The 1.5B
    /// wrote `Responses: 16, Average rating: 3.125, Mobile responses: 7` on one line in all three
    /// attempts of summarize-feedback (every figure right, every figure check failed), as it
    /// did on report-gradebook and report-stock-warehouses.
    LineFields,
    /// With `stats-first`: a largest or smallest figure Rein shows comes with the row(s) that
    /// hold it, and a figure over the rows of one value of a column that the task leaves to the
    /// model to name (a label placeholder such as `'<Warehouse>: N units'`) is shown for every
    /// value of that column, with the largest named, instead of not at all (see
    /// [`super::named_rows`]). Facts of the inputs; which row or value the task asks for stays
    /// the model's. The 1.5B wrote report-expenses' largest amount right and named the wrong
    /// employee, and counted summarize-support-week's categories by hand.
    NamedRows,
    /// A `write_sections` or `rewrite_section` call whose file would state a figure the judge
    /// cannot read as one number (several figures on one line, words after the number, twice
    /// where once is allowed, in another section) is refused with the judge's facts of that
    /// line, nothing written (see [`super::readable_figures`]). The 1.5B wrote
    /// `Physics average: 70.4 | Physics best: 90 | Physics fails: 1` on report-gradebook.
    ReadableFigures,
    /// A task that edits its deliverable in place (a text file when the run begins) is offered
    /// `edit_lines` instead of `edit_file` and `replace_file`: every change in one call, each
    /// naming a current line and the lines that take its place, every other byte kept (see
    /// [`super::line_edits`]). One exact diff for the person as before. With `edit_file` the 1.5B
    /// called `finish` after the first of several edits on six of the eight desk edit tasks;
    /// with `replace_file` (lever `whole-rewrite`) it changed the wrong line of a crontab,
    /// reflowed a JSON file onto one line and corrupted a URL it was told to keep. Takes
    /// precedence over `whole-rewrite` when both are on.
    LineEdits,
    /// With `line-fields`: a section's number line that the task quotes only for another
    /// section (report-gradebook: "three lines such as 'Math average: N'" in each of Math,
    /// Physics and History) is a field too, its label the quoted one with the other section's
    /// heading put to this one's, when the check's own regex reads that line (see
    /// [`super::stated::section_template`]). The number stays the model's. The 1.5B wrote
    /// `Physics average: 70.4 | Physics best: 90 | Physics fails: 1` on one line, where the
    /// Math lines it had fields for were right.
    SiblingLines,
    /// A write of the deliverable whose new text repeats eight or more words in a row of Rein's
    /// own messages (a requirement, a check's feedback, a progress note) that the task, the
    /// inputs and the deliverable as it stands do not hold is held before the gate, nothing
    /// written, the passage quoted; at most twice an attempt (see [`super::no_echo`]). The 1.5B
    /// pasted a requirement, regex and all, into summarize-incident's Impact section, and the
    /// 0.5B a failed check's feedback into desk_task's Risks.
    NoEcho,
    /// A run offered `table_stats` is offered `table_rows` too: the rows of a table where
    /// conditions hold (`on_hand <= reorder_at`, `course = math and result = fail`), counted,
    /// listed, and how many of them hold each value of the table's short columns. The 1.5B
    /// guessed two of report-gradebook's three fail counts after counting all the fails at once,
    /// and listed report-stock-warehouses' SKUs to reorder by eye.
    RowQuery,
    /// A `read_file` call for a line range of a short text file (one whose whole text fits a
    /// shown result) reads the whole file, and the result says so (see
    /// [`super::whole_reads`]). The 1.5B read summarize-release's ten-line commit list a line
    /// at a time, then lines past its end, into the no-progress cap, and one line of each of
    /// search-payment-timeout's logs into the turn cap.
    WholeReads,
    /// A `read_file` call whose `path` is a glob (`hiring/*.md`) or a folder (`hiring`) runs
    /// as `find_files` with that glob, and Rein then reads the files it lists, whole, each
    /// through the gate, up to a cap (see [`super::glob_reads`]). The 1.5B read
    /// summarize-interviews' three interview notes one at a time, rewriting the whole summary
    /// after each, until the no-progress cap, and explore-archive-years' one letter of twenty
    /// before writing counts for all of them.
    GlobReads,
    /// With `table-facts`: once the tables the model has read whole with the same columns are
    /// two or more, the step's message ends with Rein's figures over all their rows as one
    /// table, each numeric column's total and its sum per value of each short text column
    /// (see [`super::combined_totals`]). The 1.5B read report-timesheets' three weekly CSVs
    /// and wrote every person's and project's hours wrong.
    CombinedTotals,
    /// For a deliverable edited in place: once the model has read it whole and before its
    /// first edit, it lists the changes the task asks for; Rein counts the places where the
    /// file now differs from the file as the run found it against the list, names the next
    /// change after each step and holds a finish once per attempt while changes are left (see
    /// [`super::change_list`]). The 1.5B made the first of
    /// two or more changes and called finish on six of the eight desk edit tasks.
    ChangeList,
    /// A finish is held once per attempt while the deliverable states a total (a `Total ...:`
    /// line, a top-level `total` field) that disagrees with the sum of the figures the same
    /// document lists for it, with both figures (see [`super::own_totals`]). The 1.5B listed
    /// 4, 7, 5 and 3 letters and wrote `Total letters: 24`.
    OwnTotals,
    /// After a step that showed files whole, for a deliverable the run writes anew, the model
    /// notes what each file gives for the task; every later step's message lists the notes
    /// (see [`super::file_notes`]). The 1.5B read thirteen files of related-code-callers one by
    /// one, then wrote its answer from the first one.
    FileNotes,
    /// With `folder-stats`: Rein's counts are shown as plain lines, each figure after the words
    /// that say what it counts (`7 .js files`, `app/test: 2 files`), not as the tool's JSON (see
    /// [`super::plain_counts`]). The 1.5B, given `"files":13,...,"extensions":{"js":7}`, wrote
    /// `JavaScript files: 13` on explore-project-tree in all three attempts.
    PlainCounts,
    /// With `folder-stats`: of Rein's counts the model is shown only the kinds the contract's
    /// checks count (files always; lines, data rows only where a check counts them; bytes
    /// never), see [`super::asked_counts`]. The 1.5B listed 4, 7, 5 and 3 letters and wrote
    /// `Total letters: 96`, the total of lines Rein had shown (explore-archive-years).
    AskedCounts,
    /// With `read-cited`: when a write is held for naming inputs not read in full, Rein reads
    /// them for the model at once, each through the gate as a `read_file` call of its own (the
    /// caps of `glob-reads`: at most 24 files and one result's characters, policy's asking
    /// rules kept), and gives the held write back to send again. The 1.5B, held on
    /// explore-share-cleanup, read one of the five files its write named and wrote the same
    /// text again, three times, until each file had held it the most times it may.
    CitedReads,
}

/// Longest text parameter of the reply after a cut one (lever `short-after-cut`): two such
/// fields and a thought stay well under the 384-token reply cap.
pub const SHORT_TEXT_MAX_CHARS: u64 = 250;

impl Lever {
    pub const ALL: [Lever; 53] = [
        Lever::FactsTools,
        Lever::Requirements,
        Lever::RepeatEscape,
        Lever::RepeatPenalty,
        Lever::MonotoneAttempts,
        Lever::WriteJson,
        Lever::WriteSections,
        Lever::Checklist,
        Lever::GgufTemplate,
        Lever::TaskReminder,
        Lever::TableFacts,
        Lever::ShortAfterCut,
        Lever::ReadBack,
        Lever::RewriteSection,
        Lever::StatedLines,
        Lever::PlainBodies,
        Lever::FinishWhenMet,
        Lever::ToldDraws,
        Lever::ChangeBeforeFinish,
        Lever::DocumentFacts,
        Lever::SourceLines,
        Lever::CopiedStrings,
        Lever::LabelLines,
        Lever::InputsFirst,
        Lever::KeepInputs,
        Lever::NoPaste,
        Lever::StatsFirst,
        Lever::AutoFinish,
        Lever::RequirementsOnce,
        Lever::ReviewEdits,
        Lever::FindInputs,
        Lever::WiderSearch,
        Lever::AnswerLines,
        Lever::ReadCited,
        Lever::TaskSearch,
        Lever::FolderStats,
        Lever::WholeRewrite,
        Lever::LineFields,
        Lever::NamedRows,
        Lever::ReadableFigures,
        Lever::LineEdits,
        Lever::SiblingLines,
        Lever::NoEcho,
        Lever::RowQuery,
        Lever::WholeReads,
        Lever::GlobReads,
        Lever::CombinedTotals,
        Lever::ChangeList,
        Lever::OwnTotals,
        Lever::FileNotes,
        Lever::PlainCounts,
        Lever::AskedCounts,
        Lever::CitedReads,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Lever::FactsTools => "facts-tools",
            Lever::Requirements => "requirements",
            Lever::RepeatEscape => "repeat-escape",
            Lever::RepeatPenalty => "repeat-penalty",
            Lever::MonotoneAttempts => "monotone-attempts",
            Lever::WriteJson => "write-json",
            Lever::WriteSections => "write-sections",
            Lever::Checklist => "checklist",
            Lever::GgufTemplate => "gguf-template",
            Lever::TaskReminder => "task-reminder",
            Lever::TableFacts => "table-facts",
            Lever::ShortAfterCut => "short-after-cut",
            Lever::ReadBack => "read-back",
            Lever::RewriteSection => "rewrite-section",
            Lever::StatedLines => "stated-lines",
            Lever::PlainBodies => "plain-bodies",
            Lever::FinishWhenMet => "finish-when-met",
            Lever::ToldDraws => "told-draws",
            Lever::ChangeBeforeFinish => "change-before-finish",
            Lever::DocumentFacts => "document-facts",
            Lever::SourceLines => "source-lines",
            Lever::CopiedStrings => "copied-strings",
            Lever::LabelLines => "label-lines",
            Lever::InputsFirst => "inputs-first",
            Lever::KeepInputs => "keep-inputs",
            Lever::NoPaste => "no-paste",
            Lever::StatsFirst => "stats-first",
            Lever::AutoFinish => "auto-finish",
            Lever::RequirementsOnce => "requirements-once",
            Lever::ReviewEdits => "review-edits",
            Lever::FindInputs => "find-inputs",
            Lever::WiderSearch => "wider-search",
            Lever::AnswerLines => "answer-lines",
            Lever::ReadCited => "read-cited",
            Lever::TaskSearch => "task-search",
            Lever::FolderStats => "folder-stats",
            Lever::WholeRewrite => "whole-rewrite",
            Lever::LineFields => "line-fields",
            Lever::NamedRows => "named-rows",
            Lever::ReadableFigures => "readable-figures",
            Lever::LineEdits => "line-edits",
            Lever::SiblingLines => "sibling-lines",
            Lever::NoEcho => "no-echo",
            Lever::RowQuery => "row-query",
            Lever::WholeReads => "whole-reads",
            Lever::GlobReads => "glob-reads",
            Lever::CombinedTotals => "combined-totals",
            Lever::ChangeList => "change-list",
            Lever::OwnTotals => "own-totals",
            Lever::FileNotes => "file-notes",
            Lever::PlainCounts => "plain-counts",
            Lever::AskedCounts => "asked-counts",
            Lever::CitedReads => "cited-reads",
        }
    }

    pub fn from_name(name: &str) -> Option<Lever> {
        Lever::ALL.into_iter().find(|l| l.name() == name)
    }

    /// Every lever's name, comma-separated (for errors and help).
    pub fn names() -> String {
        Lever::ALL.map(Lever::name).join(", ")
    }
}

/// A `--lever` setting that cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeverError {
    #[error("unknown lever `{name}`; the levers are: {known}")]
    Unknown { name: String, known: String },
    #[error("`--lever {setting}` is not NAME=on or NAME=off (levers: {known})")]
    Malformed { setting: String, known: String },
}

/// The lever set of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levers {
    pub facts_tools: bool,
    pub requirements: bool,
    pub repeat_escape: bool,
    pub repeat_penalty: bool,
    pub monotone_attempts: bool,
    pub write_json: bool,
    pub write_sections: bool,
    pub checklist: bool,
    pub gguf_template: bool,
    pub task_reminder: bool,
    pub table_facts: bool,
    pub short_after_cut: bool,
    pub read_back: bool,
    pub rewrite_section: bool,
    pub stated_lines: bool,
    pub plain_bodies: bool,
    pub finish_when_met: bool,
    pub told_draws: bool,
    pub change_before_finish: bool,
    pub document_facts: bool,
    pub source_lines: bool,
    pub copied_strings: bool,
    pub label_lines: bool,
    pub inputs_first: bool,
    pub keep_inputs: bool,
    pub no_paste: bool,
    pub stats_first: bool,
    pub auto_finish: bool,
    pub requirements_once: bool,
    pub review_edits: bool,
    pub find_inputs: bool,
    pub wider_search: bool,
    pub answer_lines: bool,
    pub read_cited: bool,
    pub task_search: bool,
    pub folder_stats: bool,
    pub whole_rewrite: bool,
    pub line_fields: bool,
    pub named_rows: bool,
    pub readable_figures: bool,
    pub line_edits: bool,
    pub sibling_lines: bool,
    pub no_echo: bool,
    pub row_query: bool,
    pub whole_reads: bool,
    pub glob_reads: bool,
    pub combined_totals: bool,
    pub change_list: bool,
    pub own_totals: bool,
    pub file_notes: bool,
    pub plain_counts: bool,
    pub asked_counts: bool,
    pub cited_reads: bool,
}

impl Default for Levers {
    fn default() -> Levers {
        Levers::DEFAULT
    }
}

impl Levers {
    /// The defaults: a lever is on only when a measurement on the dev split showed it helps
    /// without hurting held-out (issue 11), or when it is how the model is meant to be run:
    /// `gguf-template` renders with the model's own template, which gave the same 20 toy runs,
    /// call for call, as llama.cpp's matcher (agent prompts start with a system message, where
    /// the two agree); the repeat penalty stays as the actor profile has it. `write-json` is on:
    /// on the ten desk tasks whose deliverable has a JSON Schema (1.5B, seed 0) it passed 5 of
    /// the 8 dev tasks where the defaults without it passed 1 (none passed only without it),
    /// and 0 of the 2 held-out tasks either way. `copied-strings` and `label-lines` are on: on
    /// doc_extract (1.5B, seeds 0-4) each alone passed 1 and 0 of 5, both 4 of 5, neither 0 of
    /// 5 (each fixes the failure the other leaves: an invented full stop after a vendor, the
    /// first line amount as the total), and with three more levers 10 of 10 seeds.
    pub const DEFAULT: Levers = Levers {
        facts_tools: false,
        requirements: false,
        repeat_escape: false,
        repeat_penalty: true,
        monotone_attempts: false,
        write_json: true,
        write_sections: false,
        checklist: false,
        gguf_template: true,
        task_reminder: false,
        table_facts: false,
        short_after_cut: false,
        read_back: false,
        rewrite_section: false,
        stated_lines: false,
        plain_bodies: false,
        finish_when_met: false,
        told_draws: false,
        change_before_finish: false,
        document_facts: false,
        source_lines: false,
        copied_strings: true,
        label_lines: true,
        inputs_first: false,
        keep_inputs: false,
        no_paste: false,
        stats_first: false,
        auto_finish: false,
        requirements_once: false,
        review_edits: false,
        find_inputs: false,
        wider_search: false,
        answer_lines: false,
        read_cited: false,
        task_search: false,
        folder_stats: false,
        whole_rewrite: false,
        line_fields: false,
        named_rows: false,
        readable_figures: false,
        line_edits: false,
        sibling_lines: false,
        no_echo: false,
        row_query: false,
        whole_reads: false,
        glob_reads: false,
        combined_totals: false,
        change_list: false,
        own_totals: false,
        file_notes: false,
        plain_counts: false,
        asked_counts: false,
        cited_reads: false,
    };

    pub const ALL_ON: Levers = Levers {
        facts_tools: true,
        requirements: true,
        repeat_escape: true,
        repeat_penalty: true,
        monotone_attempts: true,
        write_json: true,
        write_sections: true,
        checklist: true,
        gguf_template: true,
        task_reminder: true,
        table_facts: true,
        short_after_cut: true,
        read_back: true,
        rewrite_section: true,
        stated_lines: true,
        plain_bodies: true,
        finish_when_met: true,
        told_draws: true,
        change_before_finish: true,
        document_facts: true,
        source_lines: true,
        copied_strings: true,
        label_lines: true,
        inputs_first: true,
        keep_inputs: true,
        no_paste: true,
        stats_first: true,
        auto_finish: true,
        requirements_once: true,
        review_edits: true,
        find_inputs: true,
        wider_search: true,
        answer_lines: true,
        read_cited: true,
        task_search: true,
        folder_stats: true,
        whole_rewrite: true,
        line_fields: true,
        named_rows: true,
        readable_figures: true,
        line_edits: true,
        sibling_lines: true,
        no_echo: true,
        row_query: true,
        whole_reads: true,
        glob_reads: true,
        combined_totals: true,
        change_list: true,
        own_totals: true,
        file_notes: true,
        plain_counts: true,
        asked_counts: true,
        cited_reads: true,
    };

    pub fn get(&self, lever: Lever) -> bool {
        match lever {
            Lever::FactsTools => self.facts_tools,
            Lever::Requirements => self.requirements,
            Lever::RepeatEscape => self.repeat_escape,
            Lever::RepeatPenalty => self.repeat_penalty,
            Lever::MonotoneAttempts => self.monotone_attempts,
            Lever::WriteJson => self.write_json,
            Lever::WriteSections => self.write_sections,
            Lever::Checklist => self.checklist,
            Lever::GgufTemplate => self.gguf_template,
            Lever::TaskReminder => self.task_reminder,
            Lever::TableFacts => self.table_facts,
            Lever::ShortAfterCut => self.short_after_cut,
            Lever::ReadBack => self.read_back,
            Lever::RewriteSection => self.rewrite_section,
            Lever::StatedLines => self.stated_lines,
            Lever::PlainBodies => self.plain_bodies,
            Lever::FinishWhenMet => self.finish_when_met,
            Lever::ToldDraws => self.told_draws,
            Lever::ChangeBeforeFinish => self.change_before_finish,
            Lever::DocumentFacts => self.document_facts,
            Lever::SourceLines => self.source_lines,
            Lever::CopiedStrings => self.copied_strings,
            Lever::LabelLines => self.label_lines,
            Lever::InputsFirst => self.inputs_first,
            Lever::KeepInputs => self.keep_inputs,
            Lever::NoPaste => self.no_paste,
            Lever::StatsFirst => self.stats_first,
            Lever::AutoFinish => self.auto_finish,
            Lever::RequirementsOnce => self.requirements_once,
            Lever::ReviewEdits => self.review_edits,
            Lever::FindInputs => self.find_inputs,
            Lever::WiderSearch => self.wider_search,
            Lever::AnswerLines => self.answer_lines,
            Lever::ReadCited => self.read_cited,
            Lever::TaskSearch => self.task_search,
            Lever::FolderStats => self.folder_stats,
            Lever::WholeRewrite => self.whole_rewrite,
            Lever::LineFields => self.line_fields,
            Lever::NamedRows => self.named_rows,
            Lever::ReadableFigures => self.readable_figures,
            Lever::LineEdits => self.line_edits,
            Lever::SiblingLines => self.sibling_lines,
            Lever::NoEcho => self.no_echo,
            Lever::RowQuery => self.row_query,
            Lever::WholeReads => self.whole_reads,
            Lever::GlobReads => self.glob_reads,
            Lever::CombinedTotals => self.combined_totals,
            Lever::ChangeList => self.change_list,
            Lever::OwnTotals => self.own_totals,
            Lever::FileNotes => self.file_notes,
            Lever::PlainCounts => self.plain_counts,
            Lever::AskedCounts => self.asked_counts,
            Lever::CitedReads => self.cited_reads,
        }
    }

    pub fn set(&mut self, lever: Lever, on: bool) {
        match lever {
            Lever::FactsTools => self.facts_tools = on,
            Lever::Requirements => self.requirements = on,
            Lever::RepeatEscape => self.repeat_escape = on,
            Lever::RepeatPenalty => self.repeat_penalty = on,
            Lever::MonotoneAttempts => self.monotone_attempts = on,
            Lever::WriteJson => self.write_json = on,
            Lever::WriteSections => self.write_sections = on,
            Lever::Checklist => self.checklist = on,
            Lever::GgufTemplate => self.gguf_template = on,
            Lever::TaskReminder => self.task_reminder = on,
            Lever::TableFacts => self.table_facts = on,
            Lever::ShortAfterCut => self.short_after_cut = on,
            Lever::ReadBack => self.read_back = on,
            Lever::RewriteSection => self.rewrite_section = on,
            Lever::StatedLines => self.stated_lines = on,
            Lever::PlainBodies => self.plain_bodies = on,
            Lever::FinishWhenMet => self.finish_when_met = on,
            Lever::ToldDraws => self.told_draws = on,
            Lever::ChangeBeforeFinish => self.change_before_finish = on,
            Lever::DocumentFacts => self.document_facts = on,
            Lever::SourceLines => self.source_lines = on,
            Lever::CopiedStrings => self.copied_strings = on,
            Lever::LabelLines => self.label_lines = on,
            Lever::InputsFirst => self.inputs_first = on,
            Lever::KeepInputs => self.keep_inputs = on,
            Lever::NoPaste => self.no_paste = on,
            Lever::StatsFirst => self.stats_first = on,
            Lever::AutoFinish => self.auto_finish = on,
            Lever::RequirementsOnce => self.requirements_once = on,
            Lever::ReviewEdits => self.review_edits = on,
            Lever::FindInputs => self.find_inputs = on,
            Lever::WiderSearch => self.wider_search = on,
            Lever::AnswerLines => self.answer_lines = on,
            Lever::ReadCited => self.read_cited = on,
            Lever::TaskSearch => self.task_search = on,
            Lever::FolderStats => self.folder_stats = on,
            Lever::WholeRewrite => self.whole_rewrite = on,
            Lever::LineFields => self.line_fields = on,
            Lever::NamedRows => self.named_rows = on,
            Lever::ReadableFigures => self.readable_figures = on,
            Lever::LineEdits => self.line_edits = on,
            Lever::SiblingLines => self.sibling_lines = on,
            Lever::NoEcho => self.no_echo = on,
            Lever::RowQuery => self.row_query = on,
            Lever::WholeReads => self.whole_reads = on,
            Lever::GlobReads => self.glob_reads = on,
            Lever::CombinedTotals => self.combined_totals = on,
            Lever::ChangeList => self.change_list = on,
            Lever::OwnTotals => self.own_totals = on,
            Lever::FileNotes => self.file_notes = on,
            Lever::PlainCounts => self.plain_counts = on,
            Lever::AskedCounts => self.asked_counts = on,
            Lever::CitedReads => self.cited_reads = on,
        }
    }

    /// Applies one `NAME=on|off` setting (`all=on|off` sets every lever).
    pub fn apply(&mut self, setting: &str) -> Result<(), LeverError> {
        let malformed = || LeverError::Malformed {
            setting: setting.to_string(),
            known: Lever::names(),
        };
        let (name, value) = setting.split_once('=').ok_or_else(malformed)?;
        let on = match value.trim() {
            "on" => true,
            "off" => false,
            _ => return Err(malformed()),
        };
        let name = name.trim();
        if name == "all" {
            for l in Lever::ALL {
                self.set(l, on);
            }
            return Ok(());
        }
        let lever = Lever::from_name(name).ok_or_else(|| LeverError::Unknown {
            name: name.to_string(),
            known: Lever::names(),
        })?;
        self.set(lever, on);
        Ok(())
    }

    /// The defaults with each setting applied in order (a later one wins).
    pub fn from_settings<S: AsRef<str>>(settings: &[S]) -> Result<Levers, LeverError> {
        let mut levers = Levers::DEFAULT;
        for s in settings {
            levers.apply(s.as_ref())?;
        }
        Ok(levers)
    }

    /// `{"facts-tools": true, ...}`: the form journals and bench results store.
    pub fn to_json(&self) -> Value {
        let mut m = serde_json::Map::new();
        for l in Lever::ALL {
            m.insert(l.name().into(), json!(self.get(l)));
        }
        Value::Object(m)
    }
}

/// `schema` with every string whose `maxLength` is above `cap` (or unbounded) held to `cap`
/// characters; constants, enums and non-string values are left as they are.
pub fn shorten_texts(schema: &Value, cap: u64) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (k, v) in map {
                out.insert(k.clone(), shorten_texts(v, cap));
            }
            let is_string = out.get("type").and_then(Value::as_str) == Some("string");
            let fixed = out.contains_key("const") || out.contains_key("enum");
            if is_string && !fixed {
                let max = out
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                out.insert("maxLength".into(), json!(max.min(cap)));
                if out
                    .get("minLength")
                    .and_then(Value::as_u64)
                    .is_some_and(|m| m > cap)
                {
                    out.insert("minLength".into(), json!(cap));
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| shorten_texts(v, cap)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn settings_apply_in_order_and_names_round_trip() {
        for l in Lever::ALL {
            assert_eq!(Lever::from_name(l.name()), Some(l));
        }
        let l = Levers::from_settings(&["all=on", "requirements=off"]).unwrap();
        assert!(l.facts_tools && l.repeat_escape && !l.requirements);
        assert_eq!(l.to_json()["requirements"], json!(false));
        assert_eq!(l.to_json().as_object().unwrap().len(), Lever::ALL.len());
    }

    #[test]
    fn shortened_texts_keep_constants_and_shorter_bounds() {
        let schema = json!({"type": "object", "properties": {
            "path": {"type": "string", "const": "out/summary.md"},
            "mode": {"type": "string", "enum": ["a", "b"]},
            "content": {"type": "string", "maxLength": 32000},
            "note": {"type": "string"},
            "tag": {"type": "string", "maxLength": 20},
            "n": {"type": "integer", "maximum": 5},
            "list": {"type": "array", "items": {"type": "string", "minLength": 900}},
        }});
        let s = shorten_texts(&schema, 250);
        let p = &s["properties"];
        assert_eq!(p["path"], schema["properties"]["path"]);
        assert_eq!(p["mode"], schema["properties"]["mode"]);
        assert_eq!(p["content"]["maxLength"], 250);
        assert_eq!(p["note"]["maxLength"], 250);
        assert_eq!(p["tag"]["maxLength"], 20);
        assert_eq!(p["n"], schema["properties"]["n"]);
        assert_eq!(p["list"]["items"]["maxLength"], 250);
        assert_eq!(p["list"]["items"]["minLength"], 250);
    }

    #[test]
    fn an_unknown_or_malformed_lever_is_refused_with_the_names() {
        let e = Levers::from_settings(&["fact-tools=on"]).unwrap_err();
        assert!(e.to_string().contains("unknown lever `fact-tools`"), "{e}");
        assert!(e
            .to_string()
            .contains(
            "facts-tools, requirements, repeat-escape, repeat-penalty, monotone-attempts, write-json, write-sections, checklist, gguf-template, task-reminder, table-facts, short-after-cut"
        ));
        for bad in ["facts-tools", "facts-tools=yes", "=on", "facts-tools=ON"] {
            let e = Levers::from_settings(&[bad]).unwrap_err();
            assert!(e.to_string().contains("facts-tools"), "{bad}: {e}");
        }
    }
}
