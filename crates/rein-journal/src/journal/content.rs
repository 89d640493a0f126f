//! Content-addressed artifacts and frozen acceptance specs.

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::Journal;
use crate::error::{invalid, Error, Result};
use crate::{is_sha256_hex, now_millis, sha256_hex};

/// A mission's acceptance contract as frozen when the mission was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptanceSpec {
    pub mission_id: String,
    /// SHA-256 of `canonical_json`.
    pub sha256: String,
    /// The contract's canonical JSON (RFC 8785), exactly as hashed.
    pub canonical_json: String,
    pub created_at: i64,
}

impl Journal {
    /// Store `bytes` once, keyed by their SHA-256, and return the key. Storing the same content
    /// again changes nothing and returns the same key.
    pub fn put_artifact(&self, bytes: &[u8]) -> Result<String> {
        let sha = sha256_hex(bytes);
        let size = i64::try_from(bytes.len())
            .map_err(|_| invalid(self.path(), "artifact larger than SQLite can hold"))?;
        self.db.write("store an artifact", |tx| {
            tx.execute(
                "INSERT INTO artifacts (sha256, bytes, size, created_at)
                 SELECT ?1, ?2, ?3, ?4
                 WHERE NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
                params![sha, bytes, size, now_millis()],
            )
            .map_err(self.db.err("store an artifact"))?;
            Ok(())
        })?;
        Ok(sha)
    }

    /// The content stored under `sha256`, verified against its key, or `None` if there is none.
    pub fn get_artifact(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        let bytes: Option<Vec<u8>> = self
            .db
            .conn
            .query_row(
                "SELECT bytes FROM artifacts WHERE sha256 = ?1",
                [sha256],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.db.err("read an artifact"))?;
        match bytes {
            Some(bytes) if sha256_hex(&bytes) != sha256 => Err(Error::ArtifactMismatch {
                path: self.path().to_path_buf(),
                sha256: sha256.to_string(),
            }),
            other => Ok(other),
        }
    }

    /// Whether content with this SHA-256 is stored.
    pub fn has_artifact(&self, sha256: &str) -> Result<bool> {
        self.db
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?1)",
                [sha256],
                |r| r.get(0),
            )
            .map_err(self.db.err("look up an artifact"))
    }

    /// Freeze a mission's acceptance contract. `sha256` must be the SHA-256 of `canonical_json`
    /// (refused otherwise). The same contract is stored once; storing it again returns `false`.
    /// Returns `true` when this call stored it.
    pub fn store_acceptance_spec(
        &self,
        mission_id: &str,
        sha256: &str,
        canonical_json: &str,
    ) -> Result<bool> {
        if mission_id.is_empty() {
            return Err(invalid(
                self.path(),
                "an acceptance spec needs a mission id",
            ));
        }
        if !is_sha256_hex(sha256) || sha256_hex(canonical_json.as_bytes()) != sha256 {
            return Err(invalid(
                self.path(),
                format!(
                    "acceptance spec of mission {mission_id:?}: {sha256:?} is not the SHA-256 of \
                     the canonical JSON given; the contract was not stored"
                ),
            ));
        }
        if let Err(e) = serde_json::from_str::<serde_json::Value>(canonical_json) {
            return Err(crate::error::json(
                self.path(),
                format!("acceptance spec of mission {mission_id:?}"),
                e,
            ));
        }
        self.db.write("store an acceptance spec", |tx| {
            let inserted = tx
                .execute(
                    "INSERT INTO acceptance_specs (mission_id, sha256, canonical_json, created_at)
                     SELECT ?1, ?2, ?3, ?4
                     WHERE NOT EXISTS (SELECT 1 FROM acceptance_specs WHERE sha256 = ?2)",
                    params![mission_id, sha256, canonical_json, now_millis()],
                )
                .map_err(self.db.err("store an acceptance spec"))?;
            Ok(inserted == 1)
        })
    }

    /// The frozen contract with this SHA-256.
    pub fn acceptance_spec(&self, sha256: &str) -> Result<Option<AcceptanceSpec>> {
        self.db
            .conn
            .query_row(
                "SELECT mission_id, sha256, canonical_json, created_at
                 FROM acceptance_specs WHERE sha256 = ?1",
                [sha256],
                spec_from_row,
            )
            .optional()
            .map_err(self.db.err("read an acceptance spec"))
    }

    /// Every contract frozen for a mission, oldest first.
    pub fn acceptance_specs(&self, mission_id: &str) -> Result<Vec<AcceptanceSpec>> {
        let mut stmt = self
            .db
            .conn
            .prepare_cached(
                "SELECT mission_id, sha256, canonical_json, created_at
                 FROM acceptance_specs WHERE mission_id = ?1 ORDER BY id",
            )
            .map_err(self.db.err("list acceptance specs"))?;
        let rows = stmt
            .query_map([mission_id], spec_from_row)
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(self.db.err("list acceptance specs"))?;
        Ok(rows)
    }
}

fn spec_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<AcceptanceSpec> {
    Ok(AcceptanceSpec {
        mission_id: row.get(0)?,
        sha256: row.get(1)?,
        canonical_json: row.get(2)?,
        created_at: row.get(3)?,
    })
}
