//! Errors of loading, freezing and materialising missions. Each names the file and, where it
//! applies, the field, so a person can fix the mission without reading code.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MissionError {
    #[error("{}: cannot read the mission file: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not valid JSON: {message}", path.display())]
    Syntax { path: PathBuf, message: String },
    #[error("{}: field `{field}`: {message}", path.display())]
    Invalid {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error(
        "{}: the contract changed on disk mid-run (frozen sha256 {old}, now {new}); \
         the run is refused and keeps no judgment from the edited file",
        path.display()
    )]
    ContractChanged {
        path: PathBuf,
        old: String,
        new: String,
    },
    #[error(
        "{}: input `{input}` changed since the contract was frozen (sha256 {old}, now {new})",
        path.display()
    )]
    InputChanged {
        path: PathBuf,
        input: String,
        old: String,
        new: String,
    },
    #[error("cannot copy input `{input}` to {}: {source}", dest.display())]
    Copy {
        input: String,
        dest: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: refusing to copy input `{input}`: a different file is already there, and a mission \
         never overwrites a person's files",
        dest.display()
    )]
    WouldOverwrite { input: String, dest: PathBuf },
}
