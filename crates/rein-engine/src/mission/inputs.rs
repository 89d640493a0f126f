//! Copying a mission's frozen inputs (and its editable files) into a workspace.

use std::path::Path;

use super::contract::{FrozenContract, InputHash};
use super::error::MissionError;
use rein_protocol::canonical::sha256_hex;

/// Copies every input fixture to `dest_dir/<input>`, and every editable fixture likewise, and
/// returns the SHA-256 of the inputs copied (the hashes the finish rules hold them to; an
/// editable file's starting hash is `FrozenContract::editable`, which the copy was checked
/// against).
///
/// Refuses if a fixture no longer matches the hash frozen at load (the fixtures are part of the
/// contract), and never overwrites a different file already in the workspace; an identical file
/// is left as it is.
pub fn materialise_inputs(
    contract: &FrozenContract,
    dest_dir: &Path,
) -> Result<Vec<InputHash>, MissionError> {
    let mut copied = Vec::with_capacity(contract.inputs.len());
    for (i, frozen) in contract.inputs.iter().chain(&contract.editable).enumerate() {
        let src = contract.fixtures_dir.join(&frozen.path);
        let dest = dest_dir.join(&frozen.path);
        let copy_err = |source| MissionError::Copy {
            input: frozen.path.clone(),
            dest: dest.clone(),
            source,
        };
        let bytes = std::fs::read(&src).map_err(copy_err)?;
        let hash = sha256_hex(&bytes);
        if hash != frozen.sha256 {
            return Err(MissionError::InputChanged {
                path: contract.source.clone(),
                input: frozen.path.clone(),
                old: frozen.sha256.clone(),
                new: hash,
            });
        }
        match std::fs::read(&dest) {
            Ok(existing) if existing == bytes => {}
            Ok(_) => {
                return Err(MissionError::WouldOverwrite {
                    input: frozen.path.clone(),
                    dest: dest.clone(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = dest.parent() {
                    std::fs::create_dir_all(parent).map_err(copy_err)?;
                }
                std::fs::write(&dest, &bytes).map_err(copy_err)?;
            }
            Err(e) => return Err(copy_err(e)),
        }
        if i < contract.inputs.len() {
            copied.push(InputHash {
                path: frozen.path.clone(),
                sha256: hash,
            });
        }
    }
    Ok(copied)
}
